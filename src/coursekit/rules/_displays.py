"""Display equations without a label whose sides hold symbols: identities for sympy.

A labelled display is compared with its formula (CK803); a definition (`S = QK^\\top`) needs no
check; arithmetic is evaluated exactly (`coursekit.rules._accounting`). What is left, an
identity between expressions in symbols, is checked here through the same worker path as the
lesson's claims (`coursekit.verify.verify_document`: forked, under `sympy-seconds`, cached by
content): each pair of neighbouring sides becomes an identity claim under the lesson's
assumptions and formulas. A structural run (formulas off) leaves it unverified (CK820).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from coursekit.model.base import Location
from coursekit.model.tree import Lesson
from coursekit.rules import _assume
from coursekit.rules._items import Item
from coursekit.rules.base import Context
from coursekit.rules.outcomes import kept
from coursekit.verify.exact import formula_text
from coursekit.verify.latex import Side

NAMESPACE = "sympy-displays"


def judge_display(
    chapter: str, lesson: Lesson, where: Location, latex: str, sides: list[Side]
) -> Item:
    if len(sides) < 2:
        return Item(
            chapter,
            "displays",
            "unreadable",
            where,
            latex,
            "CK820",
            "display shows an expression but no equation, and no label ties it to a formula: "
            "label it ({#eq:NAME}) so that it is checked",
        )
    pairs = tuple((formula_text(s.node), s.source.strip()) for s in sides if s.node is not None)
    return Item(
        chapter,
        "displays",
        "unreadable",
        where,
        latex,
        "CK820",
        "display equation is an identity only sympy can check, and formulas are off: "
        "not verified in this run",
        sides=pairs,
    )


def verified(ctx: Context, item: Item) -> Item:
    """The item after sympy has judged the identity (formulas on), or as it was."""
    lesson = _lesson_at(ctx, item.location.path)
    if not item.sides or lesson is None or ctx.options.get("formulas", True) is False:
        return item
    verdicts = ctx.course.derive(
        ("displays", item.location.path, item.location.line, item.location.column),
        lambda: _verdicts(ctx, lesson, item.sides),
    )
    bad = next((v for v in verdicts if v.subject == "claim" and v.status != "ok"), None)
    if bad is None:
        return replace(item, status="checked", code=None, message="")
    if bad.status == "false":
        index = int(bad.key.rsplit("-", 1)[-1])
        left, right = item.sides[index][1], item.sides[index + 1][1]
        return replace(
            item,
            status="false",
            code="CK819",
            message=f"display equation is false: {left} is not {right} ({bad.message})",
        )
    return replace(
        item, message=f"display equation could not be verified ({bad.status}: {bad.message})"
    )


def _lesson_at(ctx: Context, path: str) -> Lesson | None:
    for chapter in ctx.course.chapters.values():
        for lesson in chapter.lessons.values():
            if lesson.path == path:
                return lesson
    return None


def _verdicts(ctx: Context, lesson: Lesson, sides: tuple[tuple[str, str], ...]) -> list[Any]:
    from coursekit.verify import MathsSpec, Verdict, verify_document

    notation = _assume.inherited(ctx.course, ctx.course.chapters.get(lesson.chapter_id))
    claims = [
        {"id": f"display-{i}", "kind": "identity", "lhs": a[0], "rhs": b[0]}
        for i, (a, b) in enumerate(itertools.pairwise(sides))
    ]
    spec = MathsSpec.build(
        assume=_assume.merged(lesson.meta.assume.model_dump(), notation),
        formulas=dict(lesson.meta.formulas),
        claims=claims,
    )
    timeout = float(ctx.config.limits.sympy_seconds)
    memory_mb = int(ctx.config.limits.sympy_memory_mb)
    key = f"{spec.fingerprint()}:{timeout:g}:{memory_mb}"
    cached = ctx.store.get(NAMESPACE, key)
    if isinstance(cached, list):
        return [Verdict.from_json(v) for v in cached]
    verdicts = verify_document(spec, timeout, memory_mb=memory_mb)
    if all(kept(v.subject, v.status) for v in verdicts):
        ctx.store.put(NAMESPACE, key, [v.to_json() for v in verdicts])
    return verdicts
