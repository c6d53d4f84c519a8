r"""The ``order`` claim: one meaning of Θ (and O) for every shape of expression.

``expr`` is Θ(``order``) when there are constants ``0 < c <= C`` and ``N`` such that
``c*order <= expr <= C*order`` whenever *every* variable is at least ``N``.  Each variable may
grow on its own, with the others held at any large values, or together with them: so the claim
is false as soon as the ratio ``expr/order`` runs off to 0 or infinity as one variable grows
with the others fixed (``T**2/d`` is not Θ(``T``): for a fixed ``d`` it grows as ``T**2``), and
false as soon as it does along the diagonal (every variable the same ``t``).  ``bound: O`` keeps
only the upper half (``expr <= C*order``).

How it is decided, in this order:

1. The ratio as a sum of power products.  When ``expr/order`` expands to terms
   ``coeff * x1**a1 * ... * xk**ak`` (rational exponents, coefficients free of the variables),
   which covers polynomials, ``T**2/d`` and ``sqrt(T**3/d)``, the answer is exact: a term with
   some ``a_i > 0`` makes the claim false (for fixed others it outgrows ``order`` in ``x_i``);
   otherwise the constant term must be positive for Θ (it is the limit of the ratio).
2. Otherwise, limits.  With one variable, the limit of the ratio decides.  With several, the
   limit as each variable grows with the others fixed, and along the diagonal, must be finite
   and positive (finite for O), or the claim is false; a ratio that is a product of
   one-variable factors is proven factor by factor; anything else is ``unproven``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coursekit.verify.symbolic import SympyExpr, sympy_module

#: Stand-ins for "the other variables, fixed at large values" when a limit needs numbers.
_FIXED = (1000, 10**9)


def power_terms(
    ratio: SympyExpr, variables: Sequence[Any]
) -> list[tuple[SympyExpr, tuple[Any, ...]]] | None:
    """``ratio`` as ``[(coeff, exponents)]`` over ``variables``, or None if it is not one."""
    sp = sympy_module()
    terms: dict[tuple[Any, ...], SympyExpr] = {}
    for term in sp.Add.make_args(sp.expand(ratio)):
        coeff, rest = term.as_independent(*variables, as_Add=False)
        powers = {v: sp.Integer(0) for v in variables}
        for base, exp in rest.as_powers_dict().items() if rest != 1 else ():
            if base not in powers or not exp.is_Rational:
                return None
            powers[base] += exp
        key = tuple(powers[v] for v in variables)
        terms[key] = terms.get(key, sp.Integer(0)) + coeff
    return [(c, k) for k, c in terms.items() if sp.simplify(c) != 0]


def decide(e: SympyExpr, o: SympyExpr, variables: Sequence[Any], theta: bool) -> tuple[str, str]:
    """``(status, why)`` for ``e`` being Θ(``o``) (or O when not ``theta``)."""
    sp = sympy_module()
    if o == 0:
        return "error", "order must not be 0"
    ratio = sp.powsimp(sp.expand(e / o), force=False)
    terms = power_terms(ratio, variables)
    if terms is not None:
        return _by_terms(terms, o, variables, theta)
    leading = _by_leading(ratio, o, variables, theta)
    if leading is not None:
        return leading
    return _by_limits(sp.simplify(e / o), variables, theta, f"the ratio to {sp.sstr(o)}")


def _dominant(poly: Any) -> tuple[Any, tuple[int, ...]] | None:
    """The term whose exponents are >= every other term's, one by one (if there is one)."""
    terms = [(exps, coeff) for exps, coeff in poly.terms() if coeff != 0]
    for exps, coeff in terms:
        if all(all(a >= b for a, b in zip(exps, other, strict=True)) for other, _ in terms):
            return coeff, exps
    return None


def _by_leading(
    ratio: SympyExpr, o: SympyExpr, variables: Sequence[Any], theta: bool
) -> tuple[str, str] | None:
    """A ratio of polynomials, each with one dominant term of positive coefficient, grows as the
    ratio of those terms (every other term is at most 1/N of it once each variable is >= N)."""
    sp = sympy_module()
    num, den = sp.fraction(sp.cancel(sp.together(ratio)))
    if not (num.is_polynomial(*variables) and den.is_polynomial(*variables)):
        return None
    top = _dominant(sp.Poly(num, *variables))
    bottom = _dominant(sp.Poly(den, *variables))
    if top is None or bottom is None or not (top[0].is_positive and bottom[0].is_positive):
        return None
    exps = tuple(a - b for a, b in zip(top[1], bottom[1], strict=True))
    grows = sp.simplify(top[0] / bottom[0] * _monomial(exps, variables) * o)
    faster = [str(v) for v, k in zip(variables, exps, strict=True) if k > 0]
    slower = [str(v) for v, k in zip(variables, exps, strict=True) if k < 0]
    if faster:
        return "false", f"it grows as {sp.sstr(grows)}, faster in {', '.join(faster)}"
    if slower and theta:
        return "false", f"it grows as {sp.sstr(grows)}, more slowly in {', '.join(slower)}"
    return "ok", f"it grows as {sp.sstr(grows)}"


def _monomial(exps: Sequence[Any], variables: Sequence[Any]) -> SympyExpr:
    sp = sympy_module()
    return sp.Mul(*[v**k for v, k in zip(variables, exps, strict=True)])


def _by_terms(
    terms: list[tuple[SympyExpr, tuple[Any, ...]]],
    o: SympyExpr,
    variables: Sequence[Any],
    theta: bool,
) -> tuple[str, str]:
    sp = sympy_module()
    for coeff, exps in sorted(terms, key=lambda t: [-k for k in t[1]]):
        over = [str(v) for v, k in zip(variables, exps, strict=True) if k > 0]
        if over:
            term = sp.simplify(coeff * _monomial(exps, variables) * o)
            return "false", f"its term {sp.sstr(term)} grows faster in {', '.join(over)}"
    if not theta:
        return "ok", ""
    lead = sum((c for c, exps in terms if all(k == 0 for k in exps)), start=sp.Integer(0))
    lead = sp.simplify(lead)
    if lead == 0:
        return "false", f"it has no {sp.sstr(o)} term, so it grows more slowly"
    if lead.is_positive:
        return "ok", ""
    if lead.is_nonpositive:
        return "false", f"its {sp.sstr(o)} coefficient {sp.sstr(lead)} is not positive"
    return "unproven", f"could not prove its {sp.sstr(o)} coefficient {sp.sstr(lead)} is positive"


def _tends(sp: Any, value: Any) -> str | None:
    """'0', 'oo' or 'neg' when a limit rules Θ/O out; None when it is finite and positive."""
    if value in (sp.oo, -sp.oo, sp.zoo):
        return "oo"
    if value.is_zero:
        return "0"
    if value.is_negative:
        return "neg"
    return None


def _limit(sp: Any, ratio: SympyExpr, v: Any) -> Any:
    try:
        return sp.limit(ratio, v, sp.oo)
    except (NotImplementedError, ValueError, TypeError, AttributeError):
        return None


def _refuted(sp: Any, value: Any, theta: bool) -> bool:
    bad = _tends(sp, value)
    return bad is not None and (theta or bad != "0")


def _by_limits(
    ratio: SympyExpr, variables: Sequence[Any], theta: bool, label: str
) -> tuple[str, str]:
    sp = sympy_module()
    if len(variables) == 1:
        (v,) = variables
        lim = _limit(sp, ratio, v)
        if lim is None:
            return "unproven", f"sympy could not find the limit of {label} as {v} grows"
        if _refuted(sp, lim, theta):
            return "false", f"{label} tends to {sp.sstr(lim)} as {v} grows"
        if lim.is_finite and (lim.is_positive or (not theta and lim.is_nonnegative)):
            return "ok", f"{label} tends to {sp.sstr(lim)}"
        return "unproven", f"could not decide the limit {sp.sstr(lim)} of {label}"
    for v in variables:
        others = [w for w in variables if w != v]
        for fixed in (None, *_FIXED):
            at = ratio if fixed is None else ratio.subs({w: fixed for w in others})
            lim = _limit(sp, at, v)
            if lim is None or lim.free_symbols & set(variables):
                continue
            if _refuted(sp, lim, theta):
                held = "fixed" if fixed is None else f"fixed at {fixed}"
                names = ", ".join(map(str, others))
                return (
                    "false",
                    f"with {names} {held}, {label} tends to {sp.sstr(lim)} as {v} grows",
                )
            break
    t = sp.Dummy("t", positive=True)
    lim = _limit(sp, ratio.subs({v: t for v in variables}, simultaneous=True), t)
    if lim is not None and _refuted(sp, lim, theta):
        along = " = ".join(map(str, variables))
        return "false", f"{label} tends to {sp.sstr(lim)} along {along} = t"
    return _by_factors(ratio, variables, theta, label)


def _by_factors(
    ratio: SympyExpr, variables: Sequence[Any], theta: bool, label: str
) -> tuple[str, str]:
    """A ratio that is a product of one-variable factors is Θ(1) iff each factor is."""
    sp = sympy_module()
    names = ", ".join(map(str, variables))
    unproven = ("unproven", f"could not prove it in {names} jointly (no limit rules it out)")
    parts = sp.separatevars(ratio, symbols=list(variables), dict=True, force=False)
    if not isinstance(parts, dict):
        return unproven
    coeff = parts.pop("coeff", sp.Integer(1))
    if not coeff.is_positive:
        return unproven
    for v, factor in parts.items():
        status, why = _by_limits(factor, [v], theta, f"its factor in {v}")
        if status != "ok":
            return (status, why) if status == "false" else unproven
    return "ok", f"{label} is a product of one factor per variable, each tending to a limit"


__all__ = ["decide", "power_terms"]
