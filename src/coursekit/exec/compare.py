"""Compare a program's value with the published solution. A pure function.

- integers, strings, booleans and ``None``: exact (``rtol``/``atol`` do not apply); an integer
  solution wants an integer back (a float count is a kind mismatch);
- floats: ``|got - expected| <= atol + rtol * |expected|`` (NaN equals NaN);
- arrays (an ndarray, or a rectangular list of numbers in the solution): shape first, then the
  kind (bool / number / complex); exact when both are integer arrays, else the float rule
  elementwise. A list of whole numbers in YAML may be met by a float array (that is how YAML
  writes them); a disagreement shows the shape, how many elements differ, the max abs error and
  the first differing index with both values;
- mappings: the same keys, each value compared; other lists and tuples: element by element.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

from coursekit.records import record

REPR_MAX = 200
# numpy refuses an array of more dimensions (32 before numpy 2, 64 since): a published list
# nested deeper is compared element by element instead, never handed to np.asarray.
MAX_ARRAY_DIMS = 32


@record(frozen=True)
class Comparison:
    """``ok``, else a message showing both values; ``where`` is the path (keys and indices)
    into the published value of the first disagreement, for pointing at it in a file."""

    ok: bool
    message: str = ""
    where: tuple[Any, ...] = ()

    def __bool__(self) -> bool:
        return self.ok


def compare(expected: Any, got: Any, rtol: float = 0.0, atol: float = 0.0) -> Comparison:
    problem = _compare(expected, got, float(rtol), float(atol), ())
    if problem is None:
        return Comparison(True)
    message, where = problem
    return Comparison(False, message, where)


Problem = tuple[str, tuple[Any, ...]] | None


def _path(keys: tuple[Any, ...]) -> str:
    return "".join(f"[{key!r}]" for key in keys)


def _compare(expected: Any, got: Any, rtol: float, atol: float, keys: tuple[Any, ...]) -> Problem:
    where = f"at {_path(keys)}: " if keys else ""
    got = _unwrap(got)
    if _is_array(expected) or (isinstance(expected, list | tuple) and _numeric_grid(expected)):
        return _compare_arrays(expected, got, rtol, atol, where, keys)
    if isinstance(expected, Mapping):
        return _compare_mappings(expected, got, rtol, atol, keys, where)
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) and not _is_array(got):
            return f"{where}expected a sequence of {len(expected)}, got {_show(got)}", keys
        items = list(got)
        if len(items) != len(expected):
            return f"{where}expected {len(expected)} items, got {len(items)}: {_show(got)}", keys
        for index, (want, have) in enumerate(zip(expected, items, strict=True)):
            problem = _compare(want, have, rtol, atol, (*keys, index))
            if problem:
                return problem
        return None
    message = _compare_scalars(expected, got, rtol, atol, where)
    return None if message is None else (message, keys)


def _compare_scalars(expected: Any, got: Any, rtol: float, atol: float, where: str) -> str | None:
    kind_want, kind_got = _kind(expected), _kind(got)
    if kind_want in ("bool", "str", "none", "int"):
        if kind_got != kind_want:
            return f"{where}expected {_article(kind_want)} {_show(expected)}, got {_show(got)}"
        if expected != got:
            return f"{where}expected {_show(expected)}, got {_show(got)}"
        return None
    if kind_want in ("float", "complex"):
        if kind_got not in ("int", "float") and not (kind_got == "complex" == kind_want):
            return f"{where}expected a number {_show(expected)}, got {_show(got)}"
        if _close(complex(expected), complex(got), rtol, atol):
            return None
        error = abs(complex(got) - complex(expected))
        return (
            f"{where}expected {_show(expected)}, got {_show(got)} (abs error {error:.3g} > "
            f"atol {atol:g} + rtol {rtol:g} × |expected|)"
        )
    return f"{where}cannot compare a published {type(expected).__name__} ({_show(expected)})"


def _close(want: complex, have: complex, rtol: float, atol: float) -> bool:
    if any(math.isnan(x) for x in (want.real, want.imag, have.real, have.imag)):
        return all(
            math.isnan(a) == math.isnan(b) and (math.isnan(a) or a == b)
            for a, b in ((want.real, have.real), (want.imag, have.imag))
        )
    if want == have:
        return True
    return abs(have - want) <= atol + rtol * abs(want)


def _compare_mappings(
    expected: Mapping[Any, Any],
    got: Any,
    rtol: float,
    atol: float,
    keys: tuple[Any, ...],
    where: str,
) -> Problem:
    if not isinstance(got, Mapping):
        wanted = sorted(map(str, expected))
        return f"{where}expected a mapping with keys {wanted}, got {_show(got)}", keys
    missing = [key for key in expected if key not in got]
    extra = [key for key in got if key not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(map(repr, missing))}")
        if extra:
            parts.append(f"unexpected {', '.join(map(repr, extra))}")
        return f"{where}keys differ: {'; '.join(parts)}", keys
    for key in expected:
        problem = _compare(expected[key], got[key], rtol, atol, (*keys, key))
        if problem:
            return problem
    return None


def _compare_arrays(
    expected: Any, got: Any, rtol: float, atol: float, where: str, keys: tuple[Any, ...]
) -> Problem:
    message, index = _array_problem(expected, got, rtol, atol, where)
    if message is None:
        return None
    return message, (*keys, *index)


def _array_problem(
    expected: Any, got: Any, rtol: float, atol: float, where: str
) -> tuple[str | None, tuple[int, ...]]:
    import numpy as np

    want = np.asarray(expected)
    if isinstance(got, list | tuple):
        try:
            have = np.asarray(got)
        except ValueError:
            return f"{where}expected an array of shape {want.shape}, got a ragged {_show(got)}", ()
    elif _is_array(got):
        have = got
    else:
        return f"{where}expected an array of shape {want.shape}, got {_show(got)}", ()
    if have.shape != want.shape:
        return f"{where}shape mismatch: expected shape {want.shape}, got shape {have.shape}", ()
    kind_want, kind_got = _array_kind(want.dtype.kind), _array_kind(have.dtype.kind)
    numeric = {"number", "complex"}
    incompatible = kind_want != kind_got and not {kind_want, kind_got} <= numeric
    if kind_got == "other" or incompatible or (kind_want, kind_got) == ("number", "complex"):
        return (
            f"{where}dtype mismatch: expected {kind_want} elements, got dtype {have.dtype} "
            f"(shape {have.shape})"
        ), ()
    exact = kind_want == "bool" or (want.dtype.kind in "iu" and have.dtype.kind in "iu")
    if exact:
        differ = want != have
    else:
        differ = ~np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
    count = int(np.count_nonzero(differ))
    if count == 0:
        return None, ()
    first = tuple(int(i) for i in np.argwhere(differ)[0])
    if kind_want == "bool":
        error_text = ""
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            errors = np.abs(
                have.astype(complex if "complex" in (kind_want, kind_got) else float)
                - want.astype(complex if "complex" in (kind_want, kind_got) else float)
            )
        error_text = f"; max abs error {float(np.nanmax(np.where(differ, errors, 0))):.3g}"
    index = first if want.ndim else ()
    rule = "exact" if exact else f"atol {atol:g} + rtol {rtol:g} × |expected|"
    return (
        f"{where}array mismatch (shape {want.shape}, {rule}): {count} of {want.size} elements "
        f"differ{error_text}; first at index {index}: expected {_show(want[index].item())}, "
        f"got {_show(have[index].item())}"
    ), index


def _array_kind(kind: str) -> str:
    return {"b": "bool", "i": "number", "u": "number", "f": "number", "c": "complex"}.get(
        kind, "other"
    )


def _numeric_grid(value: list[Any] | tuple[Any, ...]) -> bool:
    """A non-empty, rectangular nesting of numbers (or of booleans), at most MAX_ARRAY_DIMS
    deep: a published array."""
    if not value:
        return False
    leaves: list[Any] = []

    def shape(node: Any, depth: int = 1) -> tuple[int, ...] | None:
        if isinstance(node, list | tuple):
            if not node or depth > MAX_ARRAY_DIMS:
                return None
            shapes = {shape(child, depth + 1) for child in node}
            if len(shapes) != 1 or None in shapes:
                return None
            (inner,) = shapes
            assert inner is not None
            return (len(node), *inner)
        leaves.append(node)
        return ()

    if shape(value) is None:
        return False
    kinds = {_kind(leaf) for leaf in leaves}
    return kinds <= {"int", "float"} or kinds == {"bool"}


def _kind(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, complex):
        return "complex"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


def _unwrap(value: Any) -> Any:
    """numpy scalars and 0-d arrays as the Python scalars they hold."""
    np = sys.modules.get("numpy")
    if np is not None and (
        isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0)
    ):
        return value.item()
    return value


def _is_array(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


def _article(kind: str) -> str:
    return {"int": "an integer", "bool": "a boolean", "str": "a string", "none": "None"}.get(
        kind, kind
    )


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > REPR_MAX:
        text = text[: REPR_MAX - 3] + "..."
    kind = _kind(value)
    if kind in ("int", "float", "str", "bool", "none", "complex"):
        return text
    return f"{kind} {text}"
