"""The ``inequality`` claim kind: ``lhs OP rhs`` for every value allowed by the assumptions and
conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coursekit.verify.claims.context import (
    Context,
    _fmt,
    _point_text,
    _require,
    _sample,
    _subs,
)
from coursekit.verify.claims.model import (
    RELATIONS,
    CheckResult,
    Claim,
    ClaimError,
    split_relation,
)
from coursekit.verify.symbolic import SympyExpr, sympy_module

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _condition(
    ctx: Context, text: str, index: int, subs: Mapping[Any, Any]
) -> tuple[Any, bool, Any, Any, str]:
    """``"T < d"`` -> (d - T, strict, T, d, op) meaning ``d - T > 0``."""
    fld = f"when[{index}]"
    try:
        a_t, op, b_t = split_relation(text)
    except ClaimError as exc:
        raise ClaimError(exc.message, fld) from None
    a = _subs(ctx.expr(a_t, fld), subs)
    b = _subs(ctx.expr(b_t, fld), subs)
    if op in (">", ">="):
        a, b, op = b, a, _FLIP[op]
    return b - a, op == "<", a, b, op


def _sign(f: SympyExpr, conds: Sequence[tuple[Any, bool]]) -> str | None:
    """'+', '0+' (non-negative), '-', '0-' or None."""
    sp = sympy_module()
    if f.is_positive:
        return "+"
    if f.is_negative:
        return "-"
    for g, strict in conds:
        for target, flip in ((g, False), (-g, True)):
            r = sp.cancel(f / target)
            if r.is_number and r != 0 and r.is_real:
                pos = bool(r > 0) != flip
                if strict:
                    return "+" if pos else "-"
                return "0+" if pos else "0-"
    if f.is_nonnegative:
        return "0+"
    if f.is_nonpositive:
        return "0-"
    return None


def _factored_sign(d: SympyExpr, conds: Sequence[tuple[Any, bool]]) -> str | None:
    sp = sympy_module()
    fd = sp.factor(d)
    sign, strict = 1, True
    for factor in sp.Mul.make_args(fd):
        base, exp = factor.as_base_exp()
        if exp.is_Integer and int(exp) % 2 == 0:
            s = _sign(base, conds)
            if s in ("+", "-") or base.is_nonzero:
                continue
            strict = False
            continue
        s = _sign(factor, conds)
        if s is None:
            return None
        if s.startswith("0"):
            strict = False
        if s.endswith("-"):
            sign = -sign
    if sign > 0:
        return "+" if strict else "0+"
    return "-" if strict else "0-"


def check_inequality(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
    op = _require(claim.op, "op", claim)
    if op not in RELATIONS:
        raise ClaimError(f"op must be one of {' '.join(RELATIONS)}", "op")
    subs = ctx.where(claim)
    lhs = _subs(ctx.expr(lhs_t, "lhs"), subs)
    rhs = _subs(ctx.expr(rhs_t, "rhs"), subs)
    d = sp.simplify(rhs - lhs if op in ("<", "<=") else lhs - rhs)  # want d > 0 (or >= 0)
    strict = op in ("<", ">")
    parsed = [_condition(ctx, w, i, subs) for i, w in enumerate(claim.when)]
    conds = [(g, s) for g, s, *_ in parsed]
    rel = f"{lhs_t} {op} {rhs_t}"
    when = f" when {' and '.join(claim.when)}" if claim.when else ""
    good = ("+",) if strict else ("+", "0+")
    # 1. the sign of the factored difference
    if _factored_sign(d, conds) in good:
        return CheckResult("ok", f"{rel}{when}: the difference factors as {_fmt(sp.factor(d))}")
    # 2. write each 'x < y' with a symbol side as y = x + s (s > 0) and let sympy see the sign
    slack_subs: dict[Any, Any] = {}
    for i, (_g, s_strict, a, b, _op) in enumerate(parsed):
        slack = (
            sp.Dummy(f"s{i}", positive=True) if s_strict else sp.Dummy(f"s{i}", nonnegative=True)
        )
        if b.is_Symbol and b not in slack_subs and not a.has(b):
            slack_subs[b] = a + slack
        elif a.is_Symbol and a not in slack_subs and not b.has(a):
            if a.is_positive:
                continue  # a = b - s would lose a's positivity
            slack_subs[a] = b - slack
    if slack_subs:
        d2 = sp.expand(_subs(d, slack_subs))
        if (d2.is_positive if strict else d2.is_nonnegative) or _factored_sign(d2, []) in good:
            return CheckResult("ok", f"{rel}{when}")
    elif not claim.when and (d.is_positive if strict else d.is_nonnegative):
        return CheckResult("ok", f"{rel}")
    # 3. look for a counterexample
    import random

    rng = random.Random(f"{ctx.seed}:{claim.id}")
    syms = sorted(
        d.free_symbols | set().union(*(g.free_symbols for g in (c[0] for c in conds))), key=str
    )
    for point in _sample(ctx, syms, rng, conds):
        try:
            v = sp.N(_subs(d, point), 40)
        except Exception:
            continue
        if not (v.is_number and v.is_real):
            continue
        if (v <= 0) if strict else (v < 0):
            lv, rv = _subs(lhs, point), _subs(rhs, point)
            return CheckResult(
                "false",
                f"{rel}{when} fails at {_point_text(point)}: {lhs_t} is {_fmt(sp.nsimplify(lv))}, "
                f"{rhs_t} is {_fmt(sp.nsimplify(rv))}",
            )
    return CheckResult("unproven", f"could not prove {rel}{when}; no counterexample found either")
