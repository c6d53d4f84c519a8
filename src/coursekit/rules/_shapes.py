"""Shapes declared once in the notation: which symbols are matrices, which functions are row-wise.

A notation entry may say `shape: [T, d_k]` (with `axes: [queries, features]`, what each axis
indexes) or, for a function, `rowwise: true`. A lesson sees the course-wide table, the tables of
the apparatus entries its chapter links and its chapter's table, in that order, as for
assumptions (coursekit.rules._assume); a later declaration of a symbol replaces an earlier one.
Declarations that cannot apply are reported (CK824) and left out of what the verifier sees.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import field

from coursekit.model.base import Location
from coursekit.model.documents import NotationEntry
from coursekit.model.tree import Chapter, Course
from coursekit.records import record
from coursekit.rules._assume import _tables, notation_owners, symbol_name

_FUNCTION = re.compile(r"\\(?:mathrm|operatorname|text)\{([A-Za-z]\w*)\}|([A-Za-z]\w*)")


def function_name(latex: str) -> str | None:
    """The name a formula calls a notation symbol by (`\\mathrm{softmax}` -> `softmax`)."""
    match = _FUNCTION.fullmatch(latex.strip())
    return None if match is None else (match.group(1) or match.group(2))


def rowwise_functions() -> frozenset[str]:
    """Functions formulas may call that can be declared row-wise (not sqrt, exp, ...)."""
    from coursekit.verify.shapes import NUMBER_FUNCTIONS
    from coursekit.verify.tree import FUNCTIONS

    return frozenset(FUNCTIONS) - NUMBER_FUNCTIONS - {"transpose"}


@record
class Declared:
    """What a lesson's notation says of shapes: symbol -> (dimensions, axes), row-wise names."""

    shapes: dict[str, tuple[list[str], list[str] | None]] = field(default_factory=dict)
    rowwise: set[str] = field(default_factory=set)


def inherited(course: Course, chapter: Chapter | None) -> Declared:
    out = Declared()
    for entry in _tables(course, chapter):
        if _problem(entry) is not None:
            continue
        if entry.rowwise:
            out.rowwise.add(function_name(entry.symbol) or "")
        elif entry.shape is not None:
            name = symbol_name(entry.symbol)
            assert name is not None
            out.shapes[name] = ([str(d) for d in entry.shape], entry.axes)
    return out


def _problem(entry: NotationEntry) -> tuple[str, str] | None:
    """(field, message) when the entry's shape or row-wise declaration cannot apply."""
    from coursekit.verify.shapes import ShapeError, declared_shape

    if entry.rowwise:
        if entry.shape is not None:
            return "shape", f"'{entry.symbol}' is declared row-wise, so it has no shape of its own"
        name = function_name(entry.symbol)
        known = sorted(rowwise_functions())
        if name not in known:
            return "rowwise", (
                f"'{entry.symbol}' is declared row-wise, but formulas cannot call it "
                f"(functions that may be row-wise: {', '.join(known)})"
            )
        return None
    if entry.axes is not None and entry.shape is None:
        return "axes", f"'{entry.symbol}' names axes but declares no shape"
    if entry.shape is None:
        return None
    if symbol_name(entry.symbol) is None:
        return "shape", (
            f"notation symbol '{entry.symbol}' declares a shape, but it is not one name a "
            "formula can use (such as Q, W_{qk} or d_k)"
        )
    try:
        declared_shape(entry.shape, entry.axes)
    except ShapeError as exc:
        return ("axes" if "axes" in exc.message else "shape"), (
            f"shape of '{entry.symbol}': {exc.message}"
        )
    return None


def unusable(
    course: Course, chapters: Iterable[Chapter] | None = None, course_wide: bool = True
) -> Iterator[tuple[Location, str]]:
    """Notation entries whose shape, axes or row-wise declaration cannot apply."""
    owners = notation_owners(course, chapters, course_wide)
    for table in owners:
        for entry in table:
            problem = _problem(entry)
            if problem is not None:
                yield entry.loc(problem[0]), problem[1]


__all__ = ["Declared", "function_name", "inherited", "rowwise_functions", "unusable"]
