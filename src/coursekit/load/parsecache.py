"""Parsed YAML documents kept in a `ResultStore` (namespace `yaml`), keyed by the text's hash: the
loader's own memo, so loading never reaches up into the project cache that holds the store.

An entry is the plain data and its two position tables (values, keys), each kept as one text
with a line per position: `\n<the YAML path as JSON>\t<line>\t<column>`. A `PackedSource`
looks a position up in that text (a substring search) instead of building a dict of ~100
tuples per document: rules ask for positions in most documents, and the decoded tables were
the largest part of a loaded course's memory (104 MB of 450 at 1,000 chapters). JSON escapes
every control character, so a path's text never holds the tab or newline that delimit it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from coursekit.load.yamlsafe import LoadError
from coursekit.model.base import Source, YamlPath
from coursekit.store import carry

Positions = dict[YamlPath, tuple[int, int]]


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_ENCODE_STRING = json.encoder.encode_basestring  # what _ENCODE writes a string with


def _path_text(path: YamlPath) -> str:
    """`path` as compact JSON. Called for every position of every document parsed: paths of
    plain strings and ints are written directly, at a third of `json.dumps`'s cost."""
    parts = []
    for part in path:
        if type(part) is str:
            parts.append(_ENCODE_STRING(part))
        elif type(part) is int:
            parts.append(int.__repr__(part))
        else:  # a bool, float or None key
            return _ENCODE(list(path))
    return "[" + ",".join(parts) + "]"


def pack_positions(table: Mapping[YamlPath, tuple[int, int]]) -> str:
    rows = [f"\n{_path_text(path)}\t{line}\t{column}" for path, (line, column) in table.items()]
    return "".join(rows) + "\n"


def find_position(packed: str, path: YamlPath) -> tuple[int, int] | None:
    """The (line, column) kept for `path`, or None (also for a damaged row)."""
    needle = f"\n{_path_text(path)}\t"
    found = packed.find(needle)
    if found < 0:
        return None
    start = found + len(needle)
    line, _, column = packed[start : packed.find("\n", start)].partition("\t")
    try:
        return int(line), int(column)
    except ValueError:
        return None


def unpack_positions(packed: str) -> Positions:
    """The whole table (for a reader of `Source.values` itself); damaged rows are left out."""
    table: Positions = {}
    for row in packed.split("\n"):
        path_text, _, rest = row.partition("\t")
        line, _, column = rest.partition("\t")
        try:
            path = json.loads(path_text)
            table[tuple(path)] = (int(line), int(column))
        except (ValueError, TypeError, RecursionError):
            continue
    return table


def encode_document(data: Any, values: Mapping[Any, Any], keys: Mapping[Any, Any]) -> Any:
    """Plain data plus its position tables, each packed as one text (see the module's doc)."""
    return {"data": data, "at": [pack_positions(values), pack_positions(keys)]}


# The slots that hold a `Source`'s tables: a `PackedSource` fills them only when they are read
# whole (`source.values`); locating a node never does.
_VALUES: Any = Source.__dict__["values"]
_KEYS: Any = Source.__dict__["keys"]


class PackedSource(Source):
    """A `Source` whose position tables stay packed texts (see the module's doc).

    `value_at` and `key_at` search the texts; reading `values` or `keys` themselves unpacks
    both once. The texts are never changed, so threads may look positions up at once.
    """

    __slots__ = ("at",)

    def __init__(self, path: str, values: str, keys: str, line_offset: int = 0) -> None:
        self.at: tuple[str, str] | None = None
        super().__init__(path=path, line_offset=line_offset)
        self.at = (values, keys)

    def position(self, path: YamlPath, key: bool = False) -> tuple[int, int] | None:
        at = self.at
        if at is None:
            return Source.position(self, path, key)
        return find_position(at[1] if key else at[0], path)

    def __eq__(self, other: object) -> bool:
        # pydantic compares models' private attributes, so two equal models compare their
        # sources: the same texts are the same tables, with nothing unpacked
        if isinstance(other, PackedSource) and self.at is not None and other.at is not None:
            packed = (self.path, self.at, self.line_offset)
            return packed == (other.path, other.at, other.line_offset)
        if not isinstance(other, Source):
            return NotImplemented
        mine = (self.path, self.values, self.keys, self.line_offset)
        return mine == (other.path, other.values, other.keys, other.line_offset)

    def _unpack(self) -> None:
        at = self.at
        if at is not None:
            _VALUES.__set__(self, unpack_positions(at[0]))
            _KEYS.__set__(self, unpack_positions(at[1]))
            self.at = None

    @property
    def values(self) -> Positions:
        self._unpack()
        return cast(Positions, _VALUES.__get__(self))

    @values.setter
    def values(self, table: Positions) -> None:
        _VALUES.__set__(self, table)

    @property
    def keys(self) -> Positions:
        self._unpack()
        return cast(Positions, _KEYS.__get__(self))

    @keys.setter
    def keys(self, table: Positions) -> None:
        _KEYS.__set__(self, table)


def document_key(text: str, line_offset: int) -> str:
    # the same digest as cache.sha256, so keys written before this module existed still match
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{line_offset}"


def keep_parse(store: Any, text: str, digest: str | None, line_offset: int = 0) -> None:
    """Keep the document's parse for the next run without reading it now (a manifest that
    is validated only if a rule reads it, `coursekit.load.replay`): a store that keeps what
    a run asked for (the pack) keeps it. `digest`: the text's SHA-256, when already known."""
    key = document_key(text, line_offset) if digest is None else f"{digest}:{line_offset}"
    carry(store, NAMESPACE, key)


def _packed_pair(at: Any) -> bool:
    return isinstance(at, list) and len(at) == 2 and all(isinstance(t, str) for t in at)


def _served(hit: Any, path: str, line_offset: int) -> tuple[Any, Source] | None:
    """A kept document (or its kept `LoadError`, raised), or None for an entry of another
    shape: one written by an older coursekit, or damaged; the text is then parsed again."""
    if not isinstance(hit, dict):
        return None
    try:
        if "error" in hit:
            code, message, line, column = hit["error"]
            error = LoadError(str(code), str(message), int(line), int(column))
        elif "data" in hit and _packed_pair(hit.get("at")):
            values, keys = hit["at"]
            return hit["data"], PackedSource(path, values, keys, line_offset)
        else:
            return None
    except (TypeError, ValueError):
        return None
    raise error


NAMESPACE = "yaml"  # the store namespace of parsed documents


def cached_parse(
    store: Any,
    text: str,
    path: str,
    line_offset: int = 0,
    parsed_anew: Callable[[Any], object] | None = None,
) -> tuple[Any, Any]:
    """`yamlparse.parse_yaml` through `store` (namespace `yaml`): a document parses once.

    The key is the text's hash and the line offset (the path only names the `Source`); a
    `LoadError` is kept too, so a broken file is not re-parsed either. `parsed_anew(data)` is
    told of a document the store did not hold: text no run has seen.
    """
    key = document_key(text, line_offset)
    served = _served(store.get(NAMESPACE, key), path, line_offset)
    if served is not None:
        return served
    from coursekit.load.yamlparse import parse_yaml  # ruamel, imported by a run that parses

    try:
        data, source = parse_yaml(text, path, line_offset)
    except LoadError as exc:
        store.put(NAMESPACE, key, {"error": [exc.code, exc.message, exc.line, exc.column]})
        raise
    if parsed_anew is not None:
        parsed_anew(data)
    entry = encode_document(data, source.values, source.keys)
    store.put(NAMESPACE, key, entry)
    # The packed tables a later run reads this document with, not the dicts they were packed
    # from: a cold load's memory is then an edit's (the dicts held ~90 MB at 1,000 chapters),
    # and every run locates a value the same way.
    values, keys = entry["at"]
    return data, PackedSource(path, values, keys, line_offset)
