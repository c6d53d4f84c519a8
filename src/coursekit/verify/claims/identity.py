"""The ``identity`` claim kind: ``lhs == rhs`` up to simplification."""

from __future__ import annotations

from coursekit.verify.claims.context import (
    Context,
    _differs,
    _fmt,
    _point_text,
    _require,
    _subs,
    _where_text,
)
from coursekit.verify.claims.model import (
    CheckResult,
    Claim,
)
from coursekit.verify.symbolic import sympy_module


def check_identity(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
    subs = ctx.where(claim)
    lhs = _subs(ctx.expr(lhs_t, "lhs"), subs)
    rhs = _subs(ctx.expr(rhs_t, "rhs"), subs)
    diff = sp.simplify(sp.cancel(lhs - rhs))
    if diff == 0:
        return CheckResult("ok", f"{lhs_t} = {rhs_t}")
    shown_l, shown_r = _fmt(sp.simplify(lhs)), _fmt(sp.simplify(rhs))
    cond = f" with {_where_text(claim)}" if claim.where else ""
    point = _differs(ctx, diff, claim.id)
    if point is not None:
        right = (
            rhs_t if shown_r.replace(" ", "") == rhs_t.replace(" ", "") else f"{rhs_t} = {shown_r}"
        )
        return CheckResult(
            "false",
            f"{lhs_t}{cond} is {shown_l}, not {right} (they differ at {_point_text(point)})",
        )
    return CheckResult(
        "unproven",
        f"could not prove {lhs_t} = {rhs_t}{cond}: the difference simplifies to {_fmt(diff)}, "
        "which is zero at every sample point",
    )
