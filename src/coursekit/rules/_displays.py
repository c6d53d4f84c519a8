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
import re
from dataclasses import replace
from fractions import Fraction
from functools import partial
from typing import Any

from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.rules import _assume
from coursekit.rules._items import Item, Where
from coursekit.rules._lesson_maths import verify_specs
from coursekit.rules.base import Context
from coursekit.rules.facts import unsteady
from coursekit.rules.outcomes import kept
from coursekit.verify.claims.numbers import show
from coursekit.verify.exact import constant_value
from coursekit.verify.expr import FormulaError, parse_formula
from coursekit.verify.latex import parse_latex_sides
from coursekit.verify.tree import Name, Node, formula_text, free_names

NAMESPACE = "sympy-displays"
SETTLED = ("accounting", "settled")  # `Course.derive_of` key of the account after sympy


def display_item(
    chapter: str,
    where: Where,
    latex: str,
    labelled: bool,
    formulas: dict[str, str] | None = None,
    shown: frozenset[str] = frozenset(),
) -> Item:
    """How one display equation is accounted for, before sympy.

    `formulas` are the lesson's declared formulas and `shown` the labels its displays carry:
    an expression without a label is compared with the formula it looks like.
    """
    if labelled:
        return _settled(chapter, "checked", where, latex)  # CK803 compares it with its formula
    try:
        sides = [s for s in parse_latex_sides(latex) if s.node is not None]
    except FormulaError as exc:
        if "=" in latex and _defines(latex.split("=", 1)[0]):
            return _settled(chapter, "given", where, latex)  # a definition
        return _unverified(chapter, where, latex, _UNREADABLE.format(why=exc.message))
    if len(sides) < 2:
        return _expression_item(chapter, where, latex, sides[0].node, formulas or {}, shown)
    if isinstance(sides[0].node, Name):
        return _settled(chapter, "given", where, latex)  # a definition
    values = [constant_value(s.node) for s in sides if s.node is not None]
    if all(v is not None for v in values):
        wrong = next((s for s, v in zip(sides, values, strict=True) if v != values[0]), None)
        if wrong is None:
            return _settled(chapter, "checked", where, latex)
        first, shown_value = sides[0].source.strip(), show(values[0] or Fraction(0))
        message = f"display equation is false: {first} is {shown_value}, not {wrong.source.strip()}"
        return Item(chapter, "displays", "false", where, latex, "CK819", message)
    pairs = tuple((formula_text(s.node), s.source.strip()) for s in sides if s.node is not None)
    return _unverified(chapter, where, latex, _IDENTITY_OFF, sides=pairs)


_UNREADABLE = (
    "display equation cannot be read ({why}), so nothing checks it: "
    "label it with a formula ({{#eq:NAME}}) or write it in the readable subset"
)
_IDENTITY_OFF = (
    "display equation is an identity only sympy can check, and formulas are off: "
    "not verified in this run"
)
_EXPRESSION = (
    "display shows an expression but no equation, and no label ties it to a formula: "
    "label it ({#eq:NAME}) so that it is checked"
)
_LOOKS_LIKE_OFF = (
    "display looks like formula '{name}' but has no label, and formulas are off: "
    "not verified in this run (label it {{#eq:{name}}})"
)


def _settled(chapter: str, status: str, where: Where, latex: str) -> Item:
    return Item(chapter, "displays", status, where, latex)


def _unverified(chapter: str, where: Where, latex: str, message: str, **more: Any) -> Item:
    return Item(chapter, "displays", "unreadable", where, latex, "CK820", message, **more)


def _expression_item(
    chapter: str,
    where: Where,
    latex: str,
    node: Node | None,
    formulas: dict[str, str],
    shown: frozenset[str],
) -> Item:
    """An expression shown without a label: the formula it looks like (the same symbols, and
    preferably one no label shows) is what sympy compares it with."""
    name = _looks_like(node, formulas, shown) if node is not None else None
    if node is None or name is None:
        return _unverified(chapter, where, latex, _EXPRESSION)
    sides = ((formula_text(node), latex.strip()), (name, f"formula '{name}'"))
    message = _LOOKS_LIKE_OFF.format(name=name)
    return _unverified(chapter, where, latex, message, claim=name, sides=sides)


def _looks_like(node: Node, formulas: dict[str, str], shown: frozenset[str]) -> str | None:
    names = free_names(node)
    alike: list[str] = []
    for name, text in formulas.items():
        try:
            declared = parse_formula(text)
        except FormulaError:
            continue
        if free_names(declared) == names:
            alike.append(name)
    unshown = [name for name in alike if name not in shown]
    if len(unshown) == 1:
        return unshown[0]
    return alike[0] if len(alike) == 1 else None


def _defines(head: str) -> bool:
    try:
        sides = parse_latex_sides(head.strip())
    except FormulaError:
        return False
    return len(sides) == 1 and isinstance(sides[0].node, Name)


def settled(ctx: Context) -> tuple[Item, ...]:
    """The account of the chapters checked (`ctx.chapters()`), with every identity in symbols
    judged by sympy (when formulas are on); each chapter's is computed once per run."""
    from coursekit.rules._accounting import chapter_account

    def judged(chapter: Chapter) -> tuple[Item, ...]:
        items = chapter_account(ctx.course, chapter)
        return tuple(verified(ctx, i) if i.sides else i for i in items)

    return tuple(
        item
        for chapter in ctx.chapters()
        for item in ctx.course.derive_of(chapter.id, SETTLED, partial(judged, chapter))
    )


def settled_of(course: Course, chapter_id: str) -> tuple[Item, ...] | None:
    """The chapter's account as `settled` left it in this run, or None: not settled."""
    found = course.derived_of(chapter_id, SETTLED)
    return found if isinstance(found, tuple) else None


def verified(ctx: Context, item: Item) -> Item:
    """The item after sympy has judged the identity (formulas on), or as it was."""
    lesson = _lesson_at(ctx, item.chapter, item.location.path)
    if not item.sides or lesson is None or not ctx.options.formulas:
        return item
    verdicts = ctx.course.derive(
        ("displays", item.location.path, item.location.line, item.location.column),
        lambda: _verdicts(ctx, lesson, item.sides),
    )
    bad = next((v for v in verdicts if v.subject == "claim" and v.status != "ok"), None)
    if bad is None:
        return replace(item, status="checked", code=None, message="")
    if bad.status == "false" and item.claim is not None:
        return replace(
            item,
            status="false",
            code="CK819",
            message=f"display {item.text.strip()} looks like formula '{item.claim}' "
            f"({_formula(lesson, item.claim)}) but is not equal to it{_witness(bad.message)}",
        )
    if bad.status == "false":
        index = int(bad.key.rsplit("-", 1)[-1])
        left, right = item.sides[index][1], item.sides[index + 1][1]
        return replace(
            item,
            status="false",
            code="CK819",
            message=f"display equation is false: {left} is not {right}{_witness(bad.message)}",
        )
    return replace(
        item, message=f"display equation could not be verified ({bad.status}: {bad.message})"
    )


def _witness(message: str) -> str:
    """`: they differ at T=71, d_v=69` from sympy's message, when it gives a point."""
    found = re.search(r"they differ at [^)]*", message)
    return f": {found.group()}" if found else ""


def _formula(lesson: Lesson, name: str) -> str:
    return lesson.meta.formulas.get(name, "?")


def _lesson_at(ctx: Context, chapter_id: str, path: str) -> Lesson | None:
    chapter = ctx.course.chapters.get(chapter_id)
    for lesson in chapter.lessons.values() if chapter is not None else ():
        if lesson.path == path:
            return lesson
    return None


def _verdicts(ctx: Context, lesson: Lesson, sides: tuple[tuple[str, str], ...]) -> list[Any]:
    from coursekit.verify import MathsSpec, Verdict

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
    (verdicts,) = verify_specs(ctx, [spec], timeout, memory_mb)
    if all(kept(v.subject, v.status) for v in verdicts):
        ctx.store.put(NAMESPACE, key, [v.to_json() for v in verdicts])
    else:  # a timeout is not a fact about the lesson: what the chapter shows is not kept
        unsteady(ctx.course, lesson.chapter_id)
    return verdicts
