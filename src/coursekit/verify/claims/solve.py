"""The ``solve`` claim kind: the solutions of an equation for one variable."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coursekit.verify.claims.context import (
    Context,
    _at,
    _fmt,
    _number_text,
    _require,
    _subs,
)
from coursekit.verify.claims.model import (
    CheckResult,
    Claim,
    ClaimError,
    split_equation,
)
from coursekit.verify.symbolic import sympy_module


def check_solve(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    if claim.equation is not None:
        try:
            lhs_t, rhs_t = split_equation(claim.equation)
        except ClaimError as exc:
            raise ClaimError(exc.message, "equation") from None
        fields_ = ("equation", "equation")
    else:
        lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
        fields_ = ("lhs", "rhs")
    var_name = _require(claim.var, "for", claim)
    if not var_name.isidentifier() or var_name in ctx.trees:
        raise ClaimError(f"for: {var_name!r} is not a symbol", "for")
    if claim.solutions is None:
        raise ClaimError("a solve claim needs solutions (a list, possibly empty)", "solutions")
    subs = ctx.where(claim)
    var = ctx.table.symbol(var_name)
    if var in subs:
        raise ClaimError(f"where substitutes {var_name}, the variable solved for", "where")
    lhs = _subs(ctx.expr(lhs_t, fields_[0]), subs)
    rhs = _subs(ctx.expr(rhs_t, fields_[1]), subs)
    expected = [_subs(ctx.expr(t, f"solutions[{i}]"), subs) for i, t in enumerate(claim.solutions)]
    try:
        found = sp.solve(sp.Eq(lhs, rhs), var, dict=False)
    except NotImplementedError as exc:
        return CheckResult(
            "unproven", f"sympy could not solve {lhs_t} = {rhs_t} for {var_name}: {exc}"
        )
    if not isinstance(found, list) or any(isinstance(f, (dict, tuple)) for f in found):
        return CheckResult("unproven", f"sympy gave no plain solution list for {var_name}: {found}")
    remaining = list(found)
    unmatched = []
    for e in expected:
        for i, f in enumerate(remaining):
            if sp.simplify(f - e) == 0:
                del remaining[i]
                break
        else:
            unmatched.append(e)
    eq_text = claim.equation or f"{lhs_t} = {rhs_t}"
    found_text = "[" + ", ".join(_fmt(f) for f in found) + "]"
    claimed_text = "[" + ", ".join(claim.solutions) + "]"
    value = _number_text(found[0]) if len(found) == 1 and found[0].is_number else None
    assumed = _assumption_text(ctx, [var, *lhs.free_symbols, *rhs.free_symbols])
    if unmatched or remaining:
        return CheckResult(
            "false",
            f"solving {eq_text}{_at(claim)} for {var_name}{assumed} gives {found_text}, "
            f"the claim says {claimed_text}",
            value=value,
        )
    return CheckResult("ok", f"{eq_text} for {var_name} gives {found_text}", value=value)


def _assumption_text(ctx: Context, symbols: Iterable[Any]) -> str:
    parts = []
    for s in sorted({str(s) for s in symbols}):
        kinds = ctx.table.assumptions(s)
        if kinds:
            parts.append(f"{s} " + " ".join(sorted(kinds)))
    return f" ({'; '.join(parts)})" if parts else ""
