"""The maths of a lesson, checked once per run: what its body shows and writes, and the verdicts.

The CK8xx rules (coursekit.rules.formulas) all read the one list `lesson_maths` derives: for each
lesson with formulas, claims, labelled equations, claim-tied numbers or numeric quiz questions,
the `coursekit.verify` verdicts, cached by content in the result store (namespace `sympy`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coursekit.markdown import scan
from coursekit.model.tree import Course, Lesson
from coursekit.rules import _assume
from coursekit.rules.base import Context
from coursekit.rules.outcomes import kept

NAMESPACE = "sympy"

_EQ_LABEL = re.compile(r"[ \t]*\{#eq:([^}\s]*)\}")


@dataclass(frozen=True)
class ShownEquation:
    label: str
    latex: str
    latex_offset: int  # in the body
    label_offset: int


@dataclass(frozen=True)
class WrittenNumber:
    claim: str
    text: str
    offset: int  # of the text, in the body


@dataclass
class LessonMaths:
    lesson: Lesson
    equations: list[ShownEquation]
    numbers: list[WrittenNumber]
    quiz: list[tuple[int, str]]  # (question index, claim id) of numeric questions
    verdicts: list[Any]  # coursekit.verify.Verdict, imported lazily


def scan_body(body: str) -> tuple[list[ShownEquation], list[WrittenNumber]]:
    """Labelled display equations and numbers tied to claims, with their offsets.

    Read from the one Markdown scan every rule shares, so what is code or a comment there
    (fences of any shape, code spans, `<!-- ... -->`) holds no equation and no claim tag.
    """
    scanned = scan(body)
    equations: list[ShownEquation] = []
    for span in scanned.maths:
        if not span.display:
            continue
        label = _EQ_LABEL.match(scanned.masked, span.end)
        if label is not None:
            equations.append(
                ShownEquation(
                    label.group(1),
                    body[span.start + 2 : span.end - 2],
                    span.start + 2,
                    label.start(1) - 5,
                )
            )
    numbers = [
        WrittenNumber(tag.value, tag.text, tag.offset) for tag in scanned.tags if tag.key == "claim"
    ]
    return equations, numbers


def lesson_maths(ctx: Context) -> list[LessonMaths]:
    """Every lesson with maths, checked once per run (shared by all CK8 rules)."""
    if not ctx.options.formulas:
        return []

    def check_all() -> list[LessonMaths]:
        results = [_check_lesson(ctx, lesson) for lesson in _lessons(ctx.course)]
        return [r for r in results if r is not None]

    return ctx.course.derive(NAMESPACE, check_all)


def _lessons(course: Course) -> Iterator[Lesson]:
    for chapter in course.chapters.values():
        yield from chapter.lessons.values()


def _check_lesson(ctx: Context, lesson: Lesson) -> LessonMaths | None:
    meta = lesson.meta
    equations, numbers = scan_body(lesson.body)
    quiz = [
        (q, question.claim)
        for q, question in enumerate(meta.quiz)
        if question.kind == "numeric" and question.claim
    ]
    if not (meta.formulas or meta.claims or equations or numbers or quiz):
        return None
    from coursekit.verify import MathsSpec, Verdict, verify_document

    notation = ctx.course.derive(
        (NAMESPACE, "assume", lesson.chapter_id),
        lambda: _assume.inherited(ctx.course, ctx.course.chapters.get(lesson.chapter_id)),
    )
    spec = MathsSpec.build(
        assume=_assume.merged(meta.assume.model_dump(), notation),
        formulas=dict(meta.formulas),
        claims=[c.model_dump(by_alias=True, exclude_none=True) for c in meta.claims],
        equations=[(e.label, e.latex) for e in equations],
        numbers=[(n.claim, n.text) for n in numbers],
        quiz=[
            (claim, _num(meta.quiz[q].answer), _num(meta.quiz[q].margin or 0)) for q, claim in quiz
        ],
    )
    timeout = float(ctx.config.limits.sympy_seconds)
    memory_mb = int(ctx.config.limits.sympy_memory_mb)
    key = f"{spec.fingerprint()}:{timeout:g}:{memory_mb}"
    cached = ctx.store.get(NAMESPACE, key)
    verdicts: list[Any]
    if isinstance(cached, list):
        verdicts = [Verdict.from_json(v) for v in cached]
    else:
        verdicts = verify_document(spec, timeout, memory_mb=memory_mb)
        if all(kept(v.subject, v.status) for v in verdicts):
            ctx.store.put(NAMESPACE, key, [v.to_json() for v in verdicts])
        else:  # a slow or crowded machine is not a fact about the lesson
            ctx.store.decline(NAMESPACE, key, f"{lesson.path}: a check depended on the clock")
    return LessonMaths(lesson, equations, numbers, quiz, verdicts)


def _num(value: object) -> str:
    return "" if value is None else str(value)
