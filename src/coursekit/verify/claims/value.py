"""The ``value`` claim kind: an expression evaluates to a number, exactly, within a tolerance or to
significant digits.
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
from coursekit.verify.claims.numbers import round_significant, show
from coursekit.verify.expr import FormulaError
from coursekit.verify.symbolic import sympy_module


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
    if claim.tolerance and expected == 0:
        raise ClaimError(
            "tolerance is relative to the value, and a tolerance relative to 0 accepts only 0: "
            "drop `tolerance` (the value is checked exactly)",
            "tolerance",
        )
    value = _number_text(computed)
    head = f"{expr_t}{_at(claim)} is {_fmt(computed)}"
    if claim.digits is not None:
        q = _exact(computed)
        if q is None:
            q = Fraction(Decimal(str(sp.N(computed, 60))))
        exp_q = _exact(sp.nsimplify(expected))
        if exp_q is None:
            raise FormulaError(
                "value must be a rational number when digits is given", 0, value_t, "value"
            )
        rounded = round_significant(q, claim.digits)
        shown = f"{show(rounded)} to {claim.digits} significant digits"
        if rounded != exp_q:
            return CheckResult("false", f"{head}, {shown}; the claim says {value_t}", value=value)
        if claim.tolerance is None:
            return CheckResult("ok", f"{head}, {shown}", value=value)
    if claim.tolerance is not None:
        c, e = sp.N(computed, 50), sp.N(expected, 50)
        bound = sp.Float(claim.tolerance, 50) * abs(e)
        if abs(c - e) <= bound:
            return CheckResult(
                "ok", f"{head}, within {claim.tolerance:g} of {value_t}", value=value
            )
        rel = abs(c - e) / abs(e) if e != 0 else abs(c - e)
        return CheckResult(
            "false",
            f"{head}; the claim says {value_t} within {claim.tolerance:g}, "
            f"but they differ by {float(rel):.3g} (relative)",
            value=value,
        )
    diff = sp.simplify(computed - expected)
    if diff == 0:
        return CheckResult("ok", head, value=value)
    if diff.is_number and diff.is_zero is None and abs(sp.N(diff, 50)) < sp.Float(10) ** -40:
        return CheckResult(
            "unproven", f"could not prove {head} equals {value_t} exactly", value=value
        )
    return CheckResult("false", f"{head}, the claim says {_fmt(expected)}", value=value)
