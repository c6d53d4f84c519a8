"""Parsed YAML documents kept in a `ResultStore` (namespace `yaml`), keyed by the text's hash: the
loader's own memo, so loading never reaches up into the project cache that holds the store.

An entry is the plain data and its position tables, the tables as one compact JSON text
(`at`): loading the cache then reads one string per document instead of building ~100 small
lists, and the tables are decoded only for a document a diagnostic points into (`LazySource`).
Most documents of a run never are, and decoded tables were most of a loaded course's memory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from coursekit.load.yamlsafe import LoadError, parse_yaml
from coursekit.model.base import Source, YamlPath

Positions = dict[YamlPath, tuple[int, int]]


def _rows(table: Mapping[Any, Any]) -> list[Any]:
    return [[*path, line, column] for path, (line, column) in table.items()]


def encode_document(data: Any, values: Mapping[Any, Any], keys: Mapping[Any, Any]) -> Any:
    """Plain data plus its position tables, the tables as one JSON text (each row is the YAML
    path's parts followed by the line and the column)."""
    at = json.dumps([_rows(values), _rows(keys)], ensure_ascii=False, separators=(",", ":"))
    return {"data": data, "at": at}


def decode_positions(rows: Iterable[Any]) -> Positions:
    # a damaged row (a list or mapping in a path) is unhashable: TypeError, as for a short one
    return {tuple(row[:-2]): (int(row[-2]), int(row[-1])) for row in rows}


# The slots that hold a `Source`'s tables: `LazySource` fills them on first read.
_VALUES: Any = Source.__dict__["values"]
_KEYS: Any = Source.__dict__["keys"]


class LazySource(Source):
    """A `Source` whose position tables are decoded from the cache's text on first use.

    Two threads asking at once both decode (the same tables); neither sees half of them. A
    damaged text leaves the tables empty: positions fall back to the top of the document.
    """

    __slots__ = ("at",)

    def __init__(self, path: str, at: str, line_offset: int = 0) -> None:
        self.at: str | None = None
        super().__init__(path=path, line_offset=line_offset)
        self.at = at

    def _decode(self) -> None:
        at = self.at
        if at is None:
            return
        try:
            values_rows, keys_rows = json.loads(at)
            values, keys = decode_positions(values_rows), decode_positions(keys_rows)
        except (ValueError, TypeError, RecursionError):
            values, keys = {}, {}
        _VALUES.__set__(self, values)
        _KEYS.__set__(self, keys)
        self.at = None

    @property
    def values(self) -> Positions:
        if self.at is not None:
            self._decode()
        return cast(Positions, _VALUES.__get__(self))

    @values.setter
    def values(self, table: Positions) -> None:
        _VALUES.__set__(self, table)

    @property
    def keys(self) -> Positions:
        if self.at is not None:
            self._decode()
        return cast(Positions, _KEYS.__get__(self))

    @keys.setter
    def keys(self, table: Positions) -> None:
        _KEYS.__set__(self, table)


def document_key(text: str, line_offset: int) -> str:
    # the same digest as cache.sha256, so keys written before this module existed still match
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{line_offset}"


def _served(hit: Any, path: str, line_offset: int) -> tuple[Any, Source] | None:
    """A kept document (or its kept `LoadError`, raised), or None for an entry of another
    shape: one written by an older coursekit, or damaged; the text is then parsed again."""
    if not isinstance(hit, dict):
        return None
    try:
        if "error" in hit:
            code, message, line, column = hit["error"]
            error = LoadError(str(code), str(message), int(line), int(column))
        elif isinstance(hit.get("at"), str) and "data" in hit:
            return hit["data"], LazySource(path, hit["at"], line_offset)
        else:
            return None
    except (TypeError, ValueError):
        return None
    raise error


def cached_parse(store: Any, text: str, path: str, line_offset: int = 0) -> tuple[Any, Any]:
    """`yamlsafe.parse_yaml` through `store` (namespace `yaml`): a document parses once.

    The key is the text's hash and the line offset (the path only names the `Source`); a
    `LoadError` is kept too, so a broken file is not re-parsed either.
    """
    key = document_key(text, line_offset)
    served = _served(store.get("yaml", key), path, line_offset)
    if served is not None:
        return served
    try:
        data, source = parse_yaml(text, path, line_offset)
    except LoadError as exc:
        store.put("yaml", key, {"error": [exc.code, exc.message, exc.line, exc.column]})
        raise
    store.put("yaml", key, encode_document(data, source.values, source.keys))
    return data, source
