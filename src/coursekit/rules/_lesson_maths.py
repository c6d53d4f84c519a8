"""The maths of a lesson, checked once per run: what its body shows and writes, and the verdicts.

The CK8xx rules (coursekit.rules.formulas) all read the one list `lesson_maths` derives: for each
lesson with formulas, claims, labelled equations, claim-tied numbers or numeric quiz questions,
the `coursekit.verify` verdicts, cached by content in the result store (namespace `sympy`).
Only the chapters the rule is run on (`ctx.chapters()`) are read: an edit plans and verifies
its own chapter's lessons; the others' findings are kept per chapter (coursekit.incremental).
"""

from __future__ import annotations

import os
import re
from functools import partial
from typing import Any

from coursekit.markdown import scan
from coursekit.markdown.numbers import is_order
from coursekit.model.tree import Course, Lesson
from coursekit.records import record
from coursekit.rules import _assume, _shapes
from coursekit.rules._programs import start_early
from coursekit.rules.base import Context
from coursekit.rules.facts import unsteady
from coursekit.rules.outcomes import kept
from coursekit.store import SYMPY_PARTS

NAMESPACE = "sympy"

_EQ_LABEL = re.compile(r"[ \t]*\{#eq:([^}\s]*)\}")


@record(frozen=True)
class ShownEquation:
    label: str
    latex: str
    latex_offset: int  # in the body
    label_offset: int


@record(frozen=True)
class WrittenNumber:
    claim: str
    text: str
    offset: int  # of the text, in the body


@record
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
        WrittenNumber(tag.value, tag.text, tag.offset)
        for tag in scanned.tags
        if tag.key == "claim" and not is_order(tag.text)  # orders: coursekit.rules.numbers
    ]
    return equations, numbers


def lesson_maths(ctx: Context) -> list[LessonMaths]:
    """Every lesson with maths of the chapters checked, checked once per run (shared by all
    CK8 rules): the chapters not checked yet in this run are verified together."""
    if not ctx.options.formulas:
        return []
    course = ctx.course
    chapters = list(ctx.chapters())
    missing = [c for c in chapters if checked(course, c.id) is None]
    if missing:
        planned = [
            p for c in missing for p in map(partial(_plan_lesson, ctx), c.lessons.values()) if p
        ]
        todo = [p for p in planned if not p.cached]
        if todo:  # the program servers start meanwhile, rather than after the sympy work
            start_early(ctx)
        _verify_uncached(ctx, todo)
        by_chapter: dict[str, list[LessonMaths]] = {chapter.id: [] for chapter in missing}
        for p in planned:
            by_chapter[p.maths.lesson.chapter_id].append(p.maths)
        for chapter_id, found in by_chapter.items():
            course.derive_of(chapter_id, NAMESPACE, partial(list, found))
    return [maths for c in chapters for maths in checked(course, c.id) or ()]


def checked(course: Course, chapter_id: str) -> list[LessonMaths] | None:
    """What this run verified of the chapter's lessons, or None: not checked in this run."""
    found = course.derived_of(chapter_id, NAMESPACE)
    return found if isinstance(found, list) else None


def known_maths(ctx: Context, lesson: Lesson) -> LessonMaths | None:
    """The lesson's maths with the verdicts the store keeps for it as it reads now, or None
    when the store has none (nothing is verified here)."""
    planned = _plan_lesson(ctx, lesson)
    return planned.maths if planned is not None and planned.cached else None


@record
class _Planned:
    maths: LessonMaths  # ``verdicts`` are filled in once checked, unless ``cached``
    spec: Any  # coursekit.verify.MathsSpec
    key: str
    cached: bool
    parts_key: str  # where the lesson's job results are kept (SYMPY_PARTS)


def _plan_lesson(ctx: Context, lesson: Lesson) -> _Planned | None:
    """What the lesson asks to verify, with its verdicts if the store has them."""
    meta = lesson.meta
    equations, numbers = scan_body(lesson.body)
    quiz = [
        (q, question.claim)
        for q, question in enumerate(meta.quiz)
        if question.kind == "numeric" and question.claim
    ]
    if not (meta.formulas or meta.claims or equations or numbers or quiz):
        return None
    from coursekit.verify import MathsSpec, Verdict

    notation = ctx.course.derive_of(
        lesson.chapter_id,
        (NAMESPACE, "assume"),
        lambda: _assume.inherited(ctx.course, ctx.course.chapters.get(lesson.chapter_id)),
    )
    shaped = ctx.course.derive_of(
        lesson.chapter_id,
        (NAMESPACE, "shapes"),
        lambda: _shapes.inherited(ctx.course, ctx.course.chapters.get(lesson.chapter_id)),
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
        shapes=shaped.shapes,
        rowwise=shaped.rowwise,
    )
    timeout, memory_mb = _limits(ctx)
    key = f"{spec.fingerprint()}:{timeout:g}:{memory_mb}"
    cached = ctx.store.get(NAMESPACE, key)
    known = isinstance(cached, list)
    verdicts = [Verdict.from_json(v) for v in cached] if isinstance(cached, list) else []
    maths = LessonMaths(lesson, equations, numbers, quiz, verdicts)
    return _Planned(maths, spec, key, known, f"{lesson.path}:{timeout:g}:{memory_mb}")


def _limits(ctx: Context) -> tuple[float, int]:
    return float(ctx.config.limits.sympy_seconds), int(ctx.config.limits.sympy_memory_mb)


def _verify_uncached(ctx: Context, todo: list[_Planned]) -> None:
    """Verify the lessons the store did not know, all at once across ``jobs`` workers.

    Lessons whose maths is the same (the same key) are verified once: one at a time, the
    second would have found the first's verdicts in the store. Of each lesson, only the
    claims and equations its kept parts hold no result for go to sympy.
    """
    if not todo:
        return
    from coursekit.verify.parts import Parts

    distinct: dict[str, _Planned] = {}
    for planned in todo:
        distinct.setdefault(planned.key, planned)
    timeout, memory_mb = _limits(ctx)
    workers = ctx.options.jobs or os.cpu_count() or 1
    parts = [Parts.from_json(ctx.store.get(SYMPY_PARTS, p.parts_key)) for p in distinct.values()]
    specs = [p.spec for p in distinct.values()]
    checked = verify_specs(ctx, specs, timeout, memory_mb, workers, parts)
    by_key = dict(zip(distinct, checked, strict=True))
    parts_by_key = dict(zip(distinct, parts, strict=True))
    for planned in todo:
        planned.maths.verdicts = list(by_key[planned.key])
        ctx.store.put(SYMPY_PARTS, planned.parts_key, parts_by_key[planned.key].to_json())
    for key, first in distinct.items():
        verdicts = by_key[key]
        if all(kept(v.subject, v.status) for v in verdicts):
            ctx.store.put(NAMESPACE, key, [v.to_json() for v in verdicts])
        else:  # a slow or crowded machine is not a fact about the lesson
            why = f"{first.maths.lesson.path}: a check depended on the clock"
            ctx.store.decline(NAMESPACE, key, why)
            for planned in todo:
                if planned.key == key:
                    unsteady(ctx.course, planned.maths.lesson.chapter_id)


def verify_specs(
    ctx: Context,
    specs: list[Any],
    timeout: float,
    memory_mb: int,
    workers: int = 1,
    parts: list[Any] | None = None,
) -> list[list[Any]]:
    """`verify_documents`, in the run's sympy server when it has one (coursekit.verify.server:
    its workers do not carry the loaded course), with the specs' kept `parts` if given."""
    from coursekit.verify import verify_documents

    return verify_documents(
        specs,
        timeout,
        memory_mb=memory_mb,
        workers=workers,
        server=ctx.options.sympy,
        parts=parts,
    )


def _num(value: object) -> str:
    return "" if value is None else str(value)
