"""Decode the values the worker sends back (format in ``_server.py``), safely.

Only JSON and ``.npy`` with ``allow_pickle=False`` are read: nothing from the child can run code
here. numpy is imported only when an array arrives.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

MAX_DEPTH = 128


class WireError(ValueError):
    """The worker sent something that is not a value in the agreed format."""


def decode(data: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if not isinstance(data, dict):
        raise WireError(f"unexpected {type(data).__name__}")
    tag = data.get("$")
    if tag == "float":
        text = data.get("v")
        if text not in ("nan", "inf", "-inf"):
            raise WireError(f"bad float {text!r}")
        return float(text)
    if tag == "complex":
        return complex(
            _real(decode(data.get("re"), depth + 1)), _real(decode(data.get("im"), depth + 1))
        )
    if tag == "tuple":
        return tuple(decode(item, depth + 1) for item in _items(data))
    if tag == "dict":
        out: dict[Any, Any] = {}
        for pair in _items(data):
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("bad dict item")
            key = decode(pair[0], depth + 1)
            try:
                out[key] = decode(pair[1], depth + 1)
            except TypeError as exc:  # an unhashable key
                raise WireError(str(exc)) from None
        return out
    if tag == "ndarray":
        return _array(data.get("npy"))
    raise WireError(f"unknown tag {tag!r}")


def _items(data: dict[str, Any]) -> list[Any]:
    items = data.get("items")
    if not isinstance(items, list):
        raise WireError("missing items")
    return items


def _real(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireError("bad complex part")
    return float(value)


def _array(text: Any) -> Any:
    import numpy as np

    if not isinstance(text, str):
        raise WireError("bad array")
    try:
        raw = base64.b64decode(text, validate=True)
        return np.load(io.BytesIO(raw), allow_pickle=False)
    except (binascii.Error, ValueError, OSError, EOFError) as exc:
        raise WireError(f"bad array: {exc}") from None
