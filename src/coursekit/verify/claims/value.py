"""The ``value`` claim kind: an expression evaluates to a number, exactly, within a tolerance or to
significant digits.

When both the computed number and the stated value are exact (the usual case: formulas are read
as exact fractions), the comparison is :func:`judge_exact`, pure Python. :func:`judge_known` uses
it to judge a claim against a number its expression came to before, without sympy: an author who
corrects a quoted number re-verifies nothing else (coursekit.verify.parts).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from coursekit.verify.claims.context import (
    Context,
    _at,
    _exact,
    _fmt,
    _number_text,
    _require,
    _subs,
)
from coursekit.verify.claims.model import (
    CheckResult,
    Claim,
    ClaimError,
)
from coursekit.verify.claims.numbers import parse_value_text, round_significant, show, value_text
from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, parse_formula
from coursekit.verify.symbolic import sympy_module
from coursekit.verify.tree import BinOp, Neg, Node, Num

#: A stated value raised to a larger power is left to sympy (the exact result grows with it).
_LARGEST_POWER = 64


def check_value(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    expr_t = _require(claim.expr, "expr", claim)
    value_t = _require(claim.value, "value", claim)
    subs = ctx.where(claim)
    computed = _subs(ctx.expr(expr_t, "expr"), subs)
    computed = sp.nsimplify(computed) if computed.has(sp.Float) else sp.simplify(computed)
    expected = ctx.expr(value_t, "value")
    if computed.free_symbols:
        names = ", ".join(sorted(str(s) for s in computed.free_symbols))
        return CheckResult(
            "false", f"{expr_t}{_at(claim)} still depends on {names}: it is {_fmt(computed)}"
        )
    if expected.free_symbols:
        raise FormulaError("value must be a number", 0, value_t, "value")
    exact, stated = _exact(computed), _exact(expected)
    if exact is not None and stated is not None:
        return judge_exact(claim, exact, stated)
    if claim.tolerance and expected == 0:
        raise ClaimError(_AROUND_ZERO, "tolerance")
    value = _number_text(computed)
    head = f"{expr_t}{_at(claim)} is {_fmt(computed)}"
    if claim.digits is not None:
        q = exact
        if q is None:
            q = Fraction(Decimal(str(sp.N(computed, 60))))
        exp_q = _exact(sp.nsimplify(expected))
        if exp_q is None:
            raise FormulaError(
                "value must be a rational number when digits is given", 0, value_t, "value"
            )
        rounded = _to_digits(claim, head, value, q, exp_q)
        if rounded is not None:
            return rounded
    if claim.tolerance is not None:
        c, e = sp.N(computed, 50), sp.N(expected, 50)
        bound = sp.Float(claim.tolerance, 50) * abs(e)
        if abs(c - e) <= bound:
            return CheckResult(
                "ok", f"{head}, within {claim.tolerance:g} of {value_t}", value=value
            )
        rel = abs(c - e) / abs(e) if e != 0 else abs(c - e)
        return _too_far(claim, head, value_t, float(rel), value)
    diff = sp.simplify(computed - expected)
    if diff == 0:
        return CheckResult("ok", head, value=value)
    if diff.is_number and diff.is_zero is None and abs(sp.N(diff, 50)) < sp.Float(10) ** -40:
        return CheckResult(
            "unproven", f"could not prove {head} equals {value_t} exactly", value=value
        )
    return CheckResult("false", f"{head}, the claim says {_fmt(expected)}", value=value)


_AROUND_ZERO = (
    "tolerance is relative to the value, and a tolerance relative to 0 accepts only 0: "
    "drop `tolerance` (the value is checked exactly)"
)


def judge_exact(claim: Claim, computed: Fraction, stated: Fraction) -> CheckResult:
    """A value claim whose expression came to the exact number ``computed`` and whose value
    reads as the exact number ``stated``; raises :class:`ClaimError` as :func:`check_value`
    does (a tolerance around 0)."""
    value_t = claim.value or ""
    if claim.tolerance and stated == 0:
        raise ClaimError(_AROUND_ZERO, "tolerance")
    value = value_text(computed)
    head = f"{claim.expr}{_at(claim)} is {show(computed)}"
    if claim.digits is not None:
        rounded = _to_digits(claim, head, value, computed, stated)
        if rounded is not None:
            return rounded
    if claim.tolerance is not None:
        # The tolerance as sympy's Float(tolerance) holds it: the float's exact binary value.
        if abs(computed - stated) <= Fraction(claim.tolerance) * abs(stated):
            return CheckResult(
                "ok", f"{head}, within {claim.tolerance:g} of {value_t}", value=value
            )
        rel = abs(computed - stated) / abs(stated) if stated else abs(computed - stated)
        return _too_far(claim, head, value_t, float(rel), value)
    if computed == stated:
        return CheckResult("ok", head, value=value)
    return CheckResult("false", f"{head}, the claim says {show(stated)}", value=value)


def _to_digits(
    claim: Claim, head: str, value: str, computed: Fraction, stated: Fraction
) -> CheckResult | None:
    """The verdict of ``digits``: false when the rounding differs from the stated value, ok
    when it agrees and no tolerance is left to check (None: check the tolerance next)."""
    assert claim.digits is not None
    rounded = round_significant(computed, claim.digits)
    shown = f"{show(rounded)} to {claim.digits} significant digits"
    if rounded != stated:
        return CheckResult("false", f"{head}, {shown}; the claim says {claim.value}", value=value)
    if claim.tolerance is None:
        return CheckResult("ok", f"{head}, {shown}", value=value)
    return None


def _too_far(claim: Claim, head: str, value_t: str, rel: float, value: str) -> CheckResult:
    return CheckResult(
        "false",
        f"{head}; the claim says {value_t} within {claim.tolerance:g}, "
        f"but they differ by {rel:.3g} (relative)",
        value=value,
    )


def judge_known(claim: Claim, computed: str) -> CheckResult | None:
    """The verdict on a value claim whose expression (at its ``where``) came to the exact
    number written ``computed`` (``"p/q"``) before, or None when only sympy can give it: the
    stated value is not a plain number, or the claim counts (``cost:``/``memory:``).

    What :func:`coursekit.verify.claims.check_claim` gives for the same claim, without sympy.
    """
    if claim.kind != "value" or claim.error is not None or claim.expr is None:
        return None
    if claim.cost is not None or claim.memory is not None or not claim.value:
        return None
    stated = _constant_text(claim.value)
    if stated is None:
        return None
    try:
        return judge_exact(claim, parse_value_text(computed), stated)
    except ClaimError as exc:
        return CheckResult("error", exc.message, field=exc.field)


def _constant_text(text: str) -> Fraction | None:
    """The exact number ``text`` writes with numbers and arithmetic alone, else None."""
    try:
        return _constant(parse_formula(text, limits=DEFAULT_LIMITS, source="value"))
    except FormulaError:
        return None


def _constant(node: Node) -> Fraction | None:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Neg):
        inner = _constant(node.operand)
        return None if inner is None else -inner
    if not isinstance(node, BinOp):
        return None  # a name (a formula, a symbol, pi) or a function: sympy's to say
    left, right = _constant(node.left), _constant(node.right)
    if left is None or right is None:
        return None
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if node.op == "/":
        return left / right if right else None
    if right.denominator != 1 or abs(right) > _LARGEST_POWER or (left == 0 and right < 0):
        return None
    return left ** int(right)
