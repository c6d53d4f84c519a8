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

from collections.abc import Iterator
from typing import Any

from coursekit.diagnostics import Severity
from coursekit.hints import did_you_mean
from coursekit.rules import _assume, _shapes
from coursekit.rules._lesson_maths import NAMESPACE, LessonMaths, lesson_maths, scan_body
from coursekit.rules._maths_where import claim_loc, subject_name, value_loc, verdict_loc
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.facts import INHERITED_NOTATION
from coursekit.rules.outcomes import maths_outcome

# A chapter's findings read its own files and the notation its lessons inherit (assumptions,
# shapes), which sympy's judgements depend on.
NOTATION = INHERITED_NOTATION

# Re-exported: the LSP reads NAMESPACE, tests read scan_body and LessonMaths from here.
__all__ = ["NAMESPACE", "LessonMaths", "claim_loc", "lesson_maths", "scan_body", "value_loc"]


# -- the rules ------------------------------------------------------------------------------------
# Which rule reports which verdict is decided by one table (coursekit.rules.outcomes); a rule
# in this module only says where the verdict points and how it reads.


def _reported(ctx: Context, code: str) -> Iterator[tuple[LessonMaths, Any]]:
    """Every (lesson, verdict) that the outcome table assigns to `code`."""
    for maths in lesson_maths(ctx):
        for v in maths.verdicts:
            if maths_outcome(v.subject, v.status, v.offset).code == code:
                yield maths, v


def _report(ctx: Context, code: str, says: str = "{what}: {message}") -> Iterator[Finding]:
    for maths, v in _reported(ctx, code):
        text = says.format(what=subject_name(maths, v), message=v.message)
        yield Finding(verdict_loc(ctx.course, maths, v), text)


@rule("CK801", "formula-syntax", per_chapter=NOTATION, course_part=True)
def formula_syntax(ctx: Context) -> Iterator[Finding]:
    """A formula, or a formula-valued field of a claim, is not accepted by the formula parser.

    Formulas are Python syntax read by a whitelist: numbers, names, `+ - * / **`, unary minus,
    calls to sqrt, exp, log, ln, sin, cos, tan, tanh, sigmoid, Abs, floor, ceiling, Max, Min,
    transpose, softmax and Hadamard, and the transpose suffix `K.T`. Nothing is evaluated;
    other attribute access, strings, lambdas, comprehensions, `^`, exponents above 1000 and
    texts over 2000 characters are refused. Formulas that refer to each other in
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
    if ctx.options.formulas:
        for location, message in _assume.unusable(ctx.course, ctx.chapters(), ctx.course_part):
            yield Finding(location, message)
    for maths, v in _reported(ctx, "CK801"):
        where = verdict_loc(ctx.course, maths, v)
        if v.subject == "spec":
            yield Finding(where, v.message)
        elif v.subject == "claim":
            yield Finding(where, f"claim '{v.key}', {v.field}: {v.message}")
        else:
            yield Finding(where, f"{subject_name(maths, v)}: {v.message}")


@rule("CK802", "latex-syntax", per_chapter=NOTATION)
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


@rule("CK803", "equation-mismatch", per_chapter=NOTATION)
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


@rule("CK804", "claim-false", per_chapter=NOTATION)
def claim_false(ctx: Context) -> Iterator[Finding]:
    """A claim about the declared formulas is false; the message shows both sides.

    Kinds: `identity` (lhs = rhs after `where`), `solve` (the solutions of `equation` for `for`
    are exactly `solutions`), `value` (exact, or within `tolerance`, or rounded to `digits`
    significant digits), `order` (Θ of `order` as the variables grow: see CK805 and
    docs/format.md), `inequality` (`lhs op rhs` wherever `when` holds), `shape` (the
    expression has the stated shape, from the shapes the notation declares). See
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
        what = subject_name(maths, v)
        if v.subject == "claim":
            what = f"{_kind(maths, v.index)} {what}"
        yield Finding(verdict_loc(ctx.course, maths, v), f"{what} is false: {v.message}")


def _kind(maths: LessonMaths, index: int) -> str:
    claims = maths.lesson.meta.claims
    return claims[index].kind if index < len(claims) else "a"


@rule("CK805", "claim-unproven", per_chapter=NOTATION)
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


@rule("CK806", "claim-timeout", per_chapter=NOTATION)
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


@rule("CK807", "claim-invalid", per_chapter=NOTATION)
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


@rule("CK808", "number-mismatch", per_chapter=NOTATION)
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


@rule("CK809", "claim-unknown", per_chapter=NOTATION)
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
        where = verdict_loc(ctx.course, maths, v)
        if v.subject == "number":
            text = f"the prose cites claim '{v.key}', which this lesson does not declare{hint}"
        elif v.subject == "quiz":
            text = f"{subject_name(maths, v)} cites claim '{v.key}', which this lesson does not declare{hint}"
        else:
            text = f"{subject_name(maths, v)}: {v.message}"
        yield Finding(where, text)


@rule("CK810", "formula-not-shown", Severity.WARNING, per_chapter=NOTATION)
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


@rule("CK811", "equation-unknown", per_chapter=NOTATION)
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
            verdict_loc(ctx.course, maths, v),
            f"equation label 'eq:{v.key}' names no declared formula" + did_you_mean(v.key, known),
        )


@rule("CK812", "quiz-answer-mismatch", per_chapter=NOTATION)
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


@rule("CK813", "check-crashed", per_chapter=NOTATION)
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


@rule("CK823", "shape-mismatch", per_chapter=NOTATION)
def shape_mismatch(ctx: Context) -> Iterator[Finding]:
    """A formula's matrix shapes do not fit: a product whose inner dimensions differ, a sum of
    two shapes, a function of numbers (`sqrt`, `exp`) applied to a matrix, or a row-wise function
    (`softmax`) summed over the axis it did not normalise.

    Shapes come from the notation (`shape: [T, d_k]`, optionally `axes: [queries, features]`;
    `rowwise: true` for a function); every formula that uses a shaped symbol is checked, and the
    message names both shapes and, when it is plain, the fix. A `shape` claim that is wrong is
    a false claim (CK804).

    Fails:
        # notation: Q and K are [T, d_k]
        formulas: {scores: Q*K}
    Passes:
        formulas: {scores: Q*K.T}
    """
    yield from _report(ctx, "CK823", "{what}: {message}")


@rule("CK824", "shape-notation", per_chapter=NOTATION, course_part=True)
def shape_notation(ctx: Context) -> Iterator[Finding]:
    """A notation entry's `shape`, `axes` or `rowwise` cannot apply: the symbol is not one name
    a formula can use, a dimension is not a symbol or a positive whole number, a shape has more
    than two dimensions, `axes` does not name one role per dimension, or a row-wise symbol is not
    a function formulas can call (`softmax`).

    Fails:
        notation:
          - {symbol: Q, meaning: the queries, shape: [T, d_k, 2]}
    Passes:
        notation:
          - {symbol: Q, meaning: the queries, shape: [T, d_k], axes: [queries, features]}
          - {symbol: '\\mathrm{softmax}', meaning: normalised exponential, rowwise: true}
    """
    if not ctx.options.formulas:
        return
    for location, message in _shapes.unusable(ctx.course, ctx.chapters(), ctx.course_part):
        yield Finding(location, message)
