"""Where a CK8xx finding points: a verdict's offending text in the front matter or the body.

A verdict carries a subject, an index and perhaps a field and a character offset; these helpers
turn that into the file:line:col an author jumps to, and name the thing as the author knows it.
"""

from __future__ import annotations

import re
from typing import Any

from coursekit.model.base import Location, Node
from coursekit.model.tree import Course, Lesson
from coursekit.rules._lesson_maths import LessonMaths


def value_loc(course: Course, node: Node, path: tuple[str | int, ...], offset: int = 0) -> Location:
    """The location of character `offset` of a one-line scalar value (else its start)."""
    base = node.loc(*path)
    text = course.texts.get(base.path)
    if text is None or offset <= 0:
        return base
    lines = text.split("\n")
    if not 1 <= base.line <= len(lines):
        return base
    line = lines[base.line - 1]
    col = base.column - 1
    if col < len(line) and line[col] in "\"'":
        col += 1
    if col + offset > len(line):
        return base
    return Location(base.path, base.line, col + offset + 1)


_CLAIM_TARGET = {
    "identity": "rhs",
    "solve": "solutions",
    "value": "value",
    "order": "order",
    "inequality": "op",
    "shape": "shape",
}


def claim_loc(
    course: Course, lesson: Lesson, index: int, field: str | None, offset: int | None
) -> Location:
    """Where a claim's verdict points: the offending field (and offset), else the claim's id."""
    meta = lesson.meta
    if index >= len(meta.claims):
        return meta.loc("claims")
    claim = meta.claims[index]
    path: tuple[str | int, ...]
    if field is None:
        target = _CLAIM_TARGET.get(claim.kind, "id")
        present = getattr(claim, target, None) not in (None, [], {})
        return meta.loc("claims", index, target if present else "id")
    match = re.fullmatch(r"(where)\.(.+)|(solutions|when)\[(\d+)\]|(\w+)", field)
    if match is None:
        return meta.loc("claims", index)
    if match.group(1):
        path = ("claims", index, "where", match.group(2))
    elif match.group(3) == "solutions":
        path = ("claims", index, "solutions", int(match.group(4)))
    elif match.group(3) == "when":
        path = ("claims", index, "when")
    else:
        name = match.group(5)
        path = (
            ("claims", index, name)
            if name in type(claim).model_fields or name == "for"
            else (
                "claims",
                index,
            )
        )
        if name == "relation":
            path = ("claims", index, "op")
    return value_loc(course, meta, path, offset or 0)


def subject_name(maths: LessonMaths, v: Any) -> str:
    """The thing a verdict is about, as the author knows it."""
    if v.subject == "spec":
        return "the assumptions"
    if v.subject == "number" and v.index < len(maths.numbers):
        return f"the number [{maths.numbers[v.index].text}] written for claim '{v.key}'"
    if v.subject == "quiz" and v.index < len(maths.quiz):
        return f"quiz question {maths.quiz[v.index][0] + 1}"
    return f"{v.subject} '{v.key}'"


def verdict_loc(course: Course, maths: LessonMaths, v: Any) -> Location:
    """Where a verdict points: the offending text when it has an offset, else its owner."""
    lesson, meta = maths.lesson, maths.lesson.meta
    error = v.status == "error"
    if v.subject in ("formula", "shape"):
        return value_loc(course, meta, ("formulas", v.key), v.offset or 0)
    if v.subject == "claim":
        return claim_loc(
            course, lesson, v.index, v.field if error else None, v.offset if error else None
        )
    if v.subject == "equation" and v.index < len(maths.equations):
        eq = maths.equations[v.index]
        if v.status == "missing":
            return lesson.body_loc(eq.label_offset)
        return lesson.body_loc(eq.latex_offset + (v.offset or 0))
    if v.subject == "number" and v.index < len(maths.numbers):
        return lesson.body_loc(maths.numbers[v.index].offset)
    if v.subject == "quiz" and v.index < len(maths.quiz):
        q, _ = maths.quiz[v.index]
        return meta.loc("quiz", q, "claim" if v.status == "missing" else "answer")
    return meta.loc("assume")
