"""Parsed YAML documents kept in a `ResultStore` (namespace `yaml`), keyed by the text's hash: the
loader's own memo, so loading never reaches up into the project cache that holds the store."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from coursekit.load.yamlsafe import LoadError, parse_yaml
from coursekit.model.base import Source


def encode_document(data: Any, values: Mapping[Any, Any], keys: Mapping[Any, Any]) -> Any:
    """Plain data plus its position tables as JSON (YAML paths become lists)."""
    return {
        "data": data,
        "values": [[list(path), line, column] for path, (line, column) in values.items()],
        "keys": [[list(path), line, column] for path, (line, column) in keys.items()],
    }


def decode_positions(rows: Iterable[Any]) -> dict[tuple[str | int, ...], tuple[int, int]]:
    return {tuple(path): (int(line), int(column)) for path, line, column in rows}


def document_key(text: str, line_offset: int) -> str:
    # the same digest as cache.sha256, so keys written before this module existed still match
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest}:{line_offset}"


def cached_parse(store: Any, text: str, path: str, line_offset: int = 0) -> tuple[Any, Any]:
    """`yamlsafe.parse_yaml` through `store` (namespace `yaml`): a document parses once.

    The key is the text's hash and the line offset (the path only names the `Source`); a
    `LoadError` is kept too, so a broken file is not re-parsed either.
    """
    key = document_key(text, line_offset)
    hit = store.get("yaml", key)
    if isinstance(hit, dict):
        try:
            if "error" in hit:
                code, message, line, column = hit["error"]
                error = LoadError(str(code), str(message), int(line), int(column))
            else:
                source = Source(path=path, line_offset=line_offset)
                source.values = decode_positions(hit["values"])
                source.keys = decode_positions(hit["keys"])
                return hit["data"], source
        except (KeyError, TypeError, ValueError):
            pass  # a malformed entry: parse again
        else:
            raise error
    try:
        data, source = parse_yaml(text, path, line_offset)
    except LoadError as exc:
        store.put("yaml", key, {"error": [exc.code, exc.message, exc.line, exc.column]})
        raise
    store.put("yaml", key, encode_document(data, source.values, source.keys))
    return data, source
