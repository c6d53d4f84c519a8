"""The ``order`` claim kind: an expression is Theta (or O) of another as the variables grow."""

from __future__ import annotations

from coursekit.verify.claims.context import (
    Context,
    _fmt,
    _require,
    _subs,
    _where_text,
)
from coursekit.verify.claims.model import (
    CheckResult,
    Claim,
    ClaimError,
)
from coursekit.verify.expr import FormulaError
from coursekit.verify.symbolic import sympy_module


def check_order(ctx: Context, claim: Claim) -> CheckResult:
    """Θ (or O) as every variable grows, each on its own or together: see verify.order."""
    from coursekit.verify.order import decide

    sp = sympy_module()
    expr_t = _require(claim.expr, "expr", claim)
    order_t = _require(claim.order, "order", claim)
    subs = ctx.where(claim)
    e = sp.expand(_subs(ctx.expr(expr_t, "expr"), subs))
    o = sp.expand(_subs(ctx.expr(order_t, "order"), subs))
    if claim.variables is not None:
        variables = [ctx.table.symbol(v) for v in claim.variables]
    else:
        variables = sorted(e.free_symbols | o.free_symbols, key=str)
    if not variables:
        raise ClaimError("an order claim needs at least one variable", "variables")
    if o.is_polynomial(*variables) and len(sp.Poly(o, *variables).terms()) != 1:
        raise FormulaError("order must be a single term such as T*d**2", 0, order_t, "order")
    big = "\N{GREEK CAPITAL LETTER THETA}" if claim.bound == "theta" else "O"
    cond = f" with {_where_text(claim)}" if claim.where else ""
    head = f"{expr_t}{cond} is {_fmt(e)}"
    status, why = decide(e, o, variables, claim.bound == "theta")
    if status == "ok":
        return CheckResult("ok", f"{head}, which is {big}({_fmt(o)})" + (f": {why}" if why else ""))
    if status == "false":
        return CheckResult("false", f"{head}, not {big}({_fmt(o)}): {why}")
    if status == "error":
        raise FormulaError(why, 0, order_t, "order")
    return CheckResult("unproven", f"could not prove {expr_t} is {big}({order_t}): {why}")
