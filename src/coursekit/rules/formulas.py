"""Formulas (CK8xx): the maths a lesson derives is checked by sympy, and the prose is tied to it.

A lesson declares its formulas once in its front matter (`formulas:`, Python syntax read by a
whitelisting parser, never evaluated), states `claims:` about them, shows them as labelled
display equations (`$$T\\,(d_h^2 + d_h d_x)$$ {#eq:recurrence}`) and writes the numbers they
produce through their claims (`[26,214,400]{claim=rec-t50}`). `coursekit.verify` checks all of
it, each sympy job in a forked worker under `sympy-seconds`; verdicts are cached by content in
the result store (namespace `sympy`), so an unchanged lesson is not checked twice.

`check --structural` (option `formulas: False`) skips the family.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coursekit.diagnostics import Severity
from coursekit.hints import did_you_mean
from coursekit.markdown import scan
from coursekit.model.base import Location, Node
from coursekit.model.tree import Course, Lesson
from coursekit.rules import _assume
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.outcomes import kept, maths_outcome

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
    if ctx.options.get("formulas", True) is False:
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


# -- locations ------------------------------------------------------------------------------------


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


# -- the rules ------------------------------------------------------------------------------------
# Which rule reports which verdict is decided by one table (coursekit.rules.outcomes); a rule
# here only says where the verdict points and how it reads.


def _reported(ctx: Context, code: str) -> Iterator[tuple[LessonMaths, Any]]:
    """Every (lesson, verdict) that the outcome table assigns to `code`."""
    for maths in lesson_maths(ctx):
        for v in maths.verdicts:
            if maths_outcome(v.subject, v.status, v.offset).code == code:
                yield maths, v


def _what(maths: LessonMaths, v: Any) -> str:
    """The thing a verdict is about, as the author knows it."""
    if v.subject == "spec":
        return "the assumptions"
    if v.subject == "number" and v.index < len(maths.numbers):
        return f"the number [{maths.numbers[v.index].text}] written for claim '{v.key}'"
    if v.subject == "quiz" and v.index < len(maths.quiz):
        return f"quiz question {maths.quiz[v.index][0] + 1}"
    return f"{v.subject} '{v.key}'"


def _where(course: Course, maths: LessonMaths, v: Any) -> Location:
    """Where a verdict points: the offending text when it has an offset, else its owner."""
    lesson, meta = maths.lesson, maths.lesson.meta
    error = v.status == "error"
    if v.subject == "formula":
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


def _report(ctx: Context, code: str, says: str = "{what}: {message}") -> Iterator[Finding]:
    for maths, v in _reported(ctx, code):
        text = says.format(what=_what(maths, v), message=v.message)
        yield Finding(_where(ctx.course, maths, v), text)


@rule("CK801", "formula-syntax")
def formula_syntax(ctx: Context) -> Iterator[Finding]:
    """A formula, or a formula-valued field of a claim, is not accepted by the formula parser.

    Formulas are Python syntax read by a whitelist: numbers, names, `+ - * / **`, unary minus and
    calls to sqrt, exp, log, ln, sin, cos, tan, tanh, sigmoid, Abs, floor, ceiling, Max, Min.
    Nothing is evaluated; attribute access, strings, lambdas, comprehensions, `^`, exponents
    above 1000 and texts over 2000 characters are refused. Formulas that refer to each other in
    a cycle, assumptions other than positive, nonnegative, integer and real, and a notation
    entry whose `assume` names a symbol that is not one formula name (`\\mathrm{softmax}`) are
    reported here too.

    Fails:
        formulas:
          recurrence: T*(d_h^2 + d_h*d_x)
          evil: __import__('os').system('touch /tmp/x')
    Passes:
        formulas:
          recurrence: T*(d_h**2 + d_h*d_x)
    """
    if ctx.options.get("formulas", True) is not False:
        for location, message in _assume.unusable(ctx.course):
            yield Finding(location, message)
    for maths, v in _reported(ctx, "CK801"):
        where = _where(ctx.course, maths, v)
        if v.subject == "spec":
            yield Finding(where, v.message)
        elif v.subject == "claim":
            yield Finding(where, f"claim '{v.key}', {v.field}: {v.message}")
        else:
            yield Finding(where, f"{_what(maths, v)}: {v.message}")


@rule("CK802", "latex-syntax")
def latex_syntax(ctx: Context) -> Iterator[Finding]:
    """The LaTeX of a labelled equation uses something the checker cannot read.

    The supported subset: numbers, single letters (`Td` is T·d), Greek letters, subscripts that
    name symbols (`d_h`, `W_{hh}`, `\\alpha_{ij}`, `d_{\\text{model}}`), powers, `\\frac`,
    `\\sqrt`, `\\cdot`, `\\times`, `\\exp`, `\\log`, `\\tanh`, `\\max`, parentheses with or without
    `\\left`/`\\right`, spacing macros, and `=` chains whose label sides are `\\text{...}`.

    Fails:
        $$T\\,(d_h^2 + d_h d_x) \\approx T d^2$$ {#eq:recurrence}
    Passes:
        $$T\\,(d_h^2 + d_h d_x)$$ {#eq:recurrence}
    """
    yield from _report(ctx, "CK802")


@rule("CK803", "equation-mismatch")
def equation_mismatch(ctx: Context) -> Iterator[Finding]:
    """The LaTeX a reader sees is not the formula sympy checks.

    A display equation labelled `{#eq:NAME}` shows the declared formula `NAME`; its LaTeX is
    parsed and must be the same expression up to algebra (`T(d_h^2 + d_h d_x)` and
    `T d_h^2 + T d_h d_x` both show `T*(d_h**2 + d_h*d_x)`).

    Fails:
        formulas: {ratio: T/d}
        ...
        $$\\frac{d}{T}$$ {#eq:ratio}
    Passes:
        formulas: {ratio: T/d}
        ...
        $$\\frac{T}{d}$$ {#eq:ratio}
    """
    yield from _report(ctx, "CK803")


@rule("CK804", "claim-false")
def claim_false(ctx: Context) -> Iterator[Finding]:
    """A claim about the declared formulas is false; the message shows both sides.

    Kinds: `identity` (lhs = rhs after `where`), `solve` (the solutions of `equation` for `for`
    are exactly `solutions`), `value` (exact, or within `tolerance`, or rounded to `digits`
    significant digits), `order` (Θ of `order` as the variables grow: see CK805 and
    docs/format.md), `inequality` (`lhs op rhs` wherever `when` holds). See
    `coursekit.verify.claims` for the exact meaning.

    Fails:
        - id: rec-t50
          kind: value
          expr: recurrence
          where: {T: 50, d_h: 512, d_x: 512}
          value: 26214401
    Passes:
        - id: rec-t50
          kind: value
          expr: recurrence
          where: {T: 50, d_h: 512, d_x: 512}
          value: 26214400
    """
    for maths, v in _reported(ctx, "CK804"):
        what = _what(maths, v)
        if v.subject == "claim":
            what = f"{_kind(maths, v.index)} {what}"
        yield Finding(_where(ctx.course, maths, v), f"{what} is false: {v.message}")


def _kind(maths: LessonMaths, index: int) -> str:
    claims = maths.lesson.meta.claims
    return claims[index].kind if index < len(claims) else "a"


@rule("CK805", "claim-unproven")
def claim_unproven(ctx: Context) -> Iterator[Finding]:
    """sympy could neither prove nor refute a claim, or that an equation shows its formula.

    Distinct from a false claim (CK804): no counterexample was found either. It is an error,
    because a check that decided nothing must not pass: restate it in a form sympy can decide
    (add the assumption it needs in `assume` or in the chapter's notation, substitute with
    `where`, factor it, narrow `when`), or check it by hand and suppress the diagnostic with a
    reason.

    Fails:
        - {id: bounded, kind: inequality, lhs: sin(x), op: "<", rhs: "2"}
    Passes:
        - {id: bounded, kind: inequality, lhs: x**2, op: ">=", rhs: "0"}
    """
    hint = (
        "; help it decide: an assumption in `assume` (or the chapter's notation), "
        "a `where`, or a simpler form"
    )
    yield from _report(ctx, "CK805", "{what} could not be proven: {message}" + hint)


@rule("CK806", "claim-timeout")
def claim_timeout(ctx: Context) -> Iterator[Finding]:
    """Checking a claim or an equation took longer than the limit (`sympy-seconds`, default 5).

    The job runs in its own process and is stopped at the limit, so a check never hangs. Simplify
    the claim (substitute numbers earlier with `where`, split it), or raise the limit in
    `[tool.coursekit]`. A timeout is never cached: the next run checks again.

    Fails:
        - {id: slow, kind: identity, lhs: "(a+b+c+d+e+f)**30*(a-b+c-d+e-f)**30", rhs: "1"}
    Passes:
        - {id: quick, kind: identity, lhs: "(a+b)**2", rhs: "a**2 + 2*a*b + b**2"}
    """
    yield from _report(ctx, "CK806")


@rule("CK807", "claim-invalid")
def claim_invalid(ctx: Context) -> Iterator[Finding]:
    """A claim cannot be checked as written: a missing or unknown field, a duplicate id, an
    unknown kind or relation, a `for` that is not a symbol, a value that is not a number, or a
    `digits`/`tolerance` that would accept anything.

    Fails:
        - {id: rec-t50, kind: value, expr: recurrence}
    Passes:
        - {id: rec-t50, kind: value, expr: recurrence, where: {T: 50, d_h: 512, d_x: 512}, value: 26214400}
    """
    yield from _report(ctx, "CK807")


@rule("CK808", "number-mismatch")
def number_mismatch(ctx: Context) -> Iterator[Finding]:
    """A number written in the prose through a claim is not what the claim computes.

    `[26,214,400]{claim=rec-t50}` must show the claim's value: exactly for an integer, or
    rounded to the written precision (`[1.95]{claim=...}` for 1.953125). Thousands separators,
    decimals, "2.56 million" and small number words ("ten") are understood.

    Fails:
        the recurrence costs [26,214,401]{claim=rec-t50} multiplications
    Passes:
        the recurrence costs [26,214,400]{claim=rec-t50} multiplications
    """
    yield from _report(ctx, "CK808", "{message}")


@rule("CK809", "claim-unknown")
def claim_unknown(ctx: Context) -> Iterator[Finding]:
    """The prose or a quiz question cites a claim the lesson does not declare.

    Fails:
        the recurrence costs [26,214,400]{claim=rec-t5O} multiplications
    Passes:
        the recurrence costs [26,214,400]{claim=rec-t50} multiplications
    """
    for maths, v in _reported(ctx, "CK809"):
        known = sorted(c.id for c in maths.lesson.meta.claims)
        hint = did_you_mean(v.key, known)
        where = _where(ctx.course, maths, v)
        if v.subject == "number":
            text = f"the prose cites claim '{v.key}', which this lesson does not declare{hint}"
        elif v.subject == "quiz":
            text = (
                f"{_what(maths, v)} cites claim '{v.key}', which this lesson does not declare{hint}"
            )
        else:
            text = f"{_what(maths, v)}: {v.message}"
        yield Finding(where, text)


@rule("CK810", "formula-not-shown", Severity.WARNING)
def formula_not_shown(ctx: Context) -> Iterator[Finding]:
    """A declared formula is never shown to the reader as a labelled equation.

    Every formula a lesson derives should appear once as `$$...$$ {#eq:NAME}`, so the LaTeX the
    reader sees is checked against it. A helper formula used only inside claims can be shown or
    the warning suppressed.

    Fails:
        formulas: {grid: T**2*d_k + T**2*d_v}
        ...                                   # no {#eq:grid} in the body
    Passes:
        formulas: {grid: T**2*d_k + T**2*d_v}
        ...
        $$T^2 d_k + T^2 d_v$$ {#eq:grid}
    """
    for maths in lesson_maths(ctx):
        meta = maths.lesson.meta
        shown = {eq.label for eq in maths.equations}
        for name in meta.formulas:
            if name not in shown:
                yield Finding(
                    meta.loc("formulas", name),
                    f"formula '{name}' is never shown: add $$...$$ {{#eq:{name}}} to the body",
                )


@rule("CK811", "equation-unknown")
def equation_unknown(ctx: Context) -> Iterator[Finding]:
    """A display equation is labelled `{#eq:NAME}` but the lesson declares no formula `NAME`,
    so nothing checks what it shows: an error, since a label mistyped would otherwise leave the
    display unverified while it looks checked.

    Fails:
        $$2 T d^2$$ {#eq:recurence}
    Passes:
        formulas: {recurrence_equal: 2*T*d**2}
        ...
        $$2 T d^2$$ {#eq:recurrence_equal}
    """
    for maths, v in _reported(ctx, "CK811"):
        known = sorted(maths.lesson.meta.formulas)
        yield Finding(
            _where(ctx.course, maths, v),
            f"equation label 'eq:{v.key}' names no declared formula" + did_you_mean(v.key, known),
        )


@rule("CK812", "quiz-answer-mismatch")
def quiz_answer_mismatch(ctx: Context) -> Iterator[Finding]:
    """A numeric quiz answer that cites a claim does not match what the claim computes.

    Fails:
        - kind: numeric
          prompt: With $d = 512$, at what $T$ do the two costs meet?
          answer: 500
          margin: 0
          claim: crossing-512
    Passes:
        - kind: numeric
          prompt: With $d = 512$, at what $T$ do the two costs meet?
          answer: 512
          margin: 0
          claim: crossing-512
    """
    yield from _report(ctx, "CK812")


@rule("CK813", "check-crashed")
def check_crashed(ctx: Context) -> Iterator[Finding]:
    """Checking a claim or an equation crashed: its worker was killed (the OOM killer sends
    SIGKILL), it ran out of `sympy-memory-mb` or recursion depth, or sympy raised.

    Nothing was decided, so it is an error and never a pass; it is not cached either, so the
    next run checks again. Simplify the claim (substitute numbers with `where`, split it), or
    raise `sympy-memory-mb`.

    Fails:
        # with sympy-memory-mb = 400 in [tool.coursekit]
        formulas: {big: 9**999, huge: 2**big}
        claims:
          - {id: hungry, kind: identity, lhs: huge, rhs: "huge + 1"}
    Passes:
        formulas: {big: 9**999}
        claims:
          - {id: fine, kind: identity, lhs: big, rhs: "big"}
    """
    yield from _report(ctx, "CK813", "{what}: the check crashed: {message}")
