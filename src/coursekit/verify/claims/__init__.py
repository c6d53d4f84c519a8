r"""Claims about declared formulas, and the checks that tie the prose to them.

A :class:`Claim` is plain data (strings and numbers, as read from YAML).  :class:`Context` holds a
lesson's assumptions and parsed formulas; :func:`check_claim` checks one claim in it.  Every
result is a :class:`CheckResult` whose ``status`` is one of

* ``"ok"``       -- proven;
* ``"false"``    -- disproven (the message shows both sides, often at a counterexample point);
* ``"unproven"`` -- sympy could not decide either way (distinct from false);
* ``"error"``    -- the claim itself is malformed (bad syntax, unknown field, missing formula);
  ``offset`` and ``field`` then point into the offending text;
* ``"crashed"``  -- sympy raised, or ran out of memory or recursion depth: no verdict at all.

Claim kinds and their precise semantics (``where`` substitutions are applied first, to every
expression of the claim, simultaneously; assumptions are the lesson's ``assume``):

``identity``   ``lhs == rhs``: ``simplify(lhs - rhs) == 0``.  If sympy leaves a non-zero
               difference, the two sides are compared at sample points: a point where they differ
               makes the claim false, otherwise it is unproven.
``solve``      ``equation: "a = b"`` (or ``lhs``/``rhs``), ``for: T``: the set of solutions of
               ``a - b = 0`` for the variable, under the assumptions on every symbol (sympy's
               ``solve`` discards solutions that contradict them), equals the set ``solutions``
               (compared element-wise up to simplification).  With exactly one numeric solution,
               that number is the claim's value.
``value``      ``expr`` evaluated at ``where`` is a number equal to ``value``: exactly; or, with
               ``tolerance: r`` (``0 <= r < 1``; none around a value of 0),
               ``|computed - value| <= r * |value|``; and/or, with ``digits: n`` (``1 <= n <= 30``),
               the computed value rounded (half up) to ``n`` *significant* digits is ``value``
               (10.24 to 2 digits is 10; 1.953125 to 3 digits is 1.95).  When both are given,
               both must hold.  The computed number is the claim's value.
``order``      ``expr`` is Theta(``order``) as *all* variables tend to infinity independently: there
               are constants ``0 < c <= C`` and ``N`` with ``c*order <= expr <= C*order`` whenever
               every variable is ``>= N``.  Variables are ``variables`` if given, else every free
               symbol of ``expr`` and ``order``.  For a polynomial ``expr`` and a monomial ``order``
               ``m`` this holds iff every monomial of ``expr`` divides ``m`` (no exponent exceeds
               ``m``'s) and the coefficient of ``m`` itself is positive; that is what is checked.
               ``bound: O`` checks only the upper bound.  Otherwise, with one variable, the limit
               of ``expr/order`` must be finite and positive; with several, a limit along the
               diagonal that is 0 or infinite disproves the claim, anything else is unproven.
``shape``      ``expr`` has the shape ``shape`` (``[T, d_v]``; ``[]`` a scalar) given the shapes the
               notation declares, and its axes index ``axes`` when given; a product that does not
               conform, or a row-wise function over the wrong axis, makes it false
               (:mod:`coursekit.verify.shapes`).  A ``value`` or ``order`` claim may give ``cost:``
               (multiply-adds of the expression's matrix products) or ``memory:`` (entries of its
               value) instead of ``expr`` (an ``identity``, instead of ``lhs``): the count,
               derived from the shapes, is the expression.
``inequality`` ``lhs OP rhs`` (``op`` one of ``< <= > >=``, or ``relation: "a < b"``) holds for
               every value of the symbols allowed by the assumptions and the ``when`` conditions
               (e.g. ``T < d``).  Proven by the sign of the factored difference (each factor's
               sign from the assumptions or from a condition), or by writing a condition
               ``x < y`` as ``y = x + s`` with ``s > 0`` and letting sympy see that the
               difference is positive.  A sample point that satisfies the conditions and breaks
               the inequality makes it false; otherwise it is unproven.

:func:`check_number` (a number as written in the prose against a claim's value) and
:func:`check_quiz_answer` are pure Python and do not import sympy.

Layout: ``model`` (:class:`Claim`, :class:`CheckResult`), ``numbers`` (number reading and
rounding), ``context`` (:class:`Context` and the sympy helpers every kind shares), one module per
claim kind (``identity``, ``solve``, ``value``, ``order``, ``inequality``, ``shape``), and ``equation`` (the
reader's LaTeX against a declared formula).  This module only dispatches a claim to its kind; a
new kind is a new module here plus an entry in ``_CHECKERS`` and ``model.CLAIM_KINDS``.
"""

from __future__ import annotations

import dataclasses

from coursekit.verify.claims.context import Context
from coursekit.verify.claims.equation import check_equation_latex
from coursekit.verify.claims.identity import check_identity
from coursekit.verify.claims.inequality import check_inequality
from coursekit.verify.claims.model import (
    CLAIM_KINDS,
    RELATIONS,
    CheckResult,
    Claim,
    ClaimError,
    split_equation,
    split_relation,
)
from coursekit.verify.claims.numbers import (
    Written,
    check_number,
    check_quiz_answer,
    parse_value_text,
    read_number,
    round_significant,
    show,
    value_text,
)
from coursekit.verify.claims.order import check_order
from coursekit.verify.claims.shape import check_shape, counted, numbers_only
from coursekit.verify.claims.solve import check_solve
from coursekit.verify.claims.value import check_value
from coursekit.verify.expr import FormulaError

_CHECKERS = {
    "identity": check_identity,
    "solve": check_solve,
    "value": check_value,
    "order": check_order,
    "inequality": check_inequality,
    "shape": check_shape,
}


def check_claim(ctx: Context, claim: Claim) -> CheckResult:
    """Check one claim; never raises for a problem in the claim (that is an ``error`` result)."""
    if claim.error is not None:
        return CheckResult("error", claim.error, field=claim.error_field)
    checker = _CHECKERS.get(claim.kind)
    if checker is None:
        return CheckResult("error", f"unknown claim kind {claim.kind!r}", field="kind")
    try:
        says = ""
        if claim.cost is not None or claim.memory is not None:
            claim, says = counted(ctx, claim)
        if claim.kind != "shape":
            refused = numbers_only(ctx, claim)
            if refused is not None:
                return refused
        res = checker(ctx, claim)
        return dataclasses.replace(res, message=says + res.message) if says else res
    except FormulaError as exc:
        return CheckResult("error", exc.message, offset=exc.offset, field=exc.source)
    except ClaimError as exc:
        return CheckResult("error", exc.message, field=exc.field)
    except RecursionError:
        return CheckResult("crashed", "sympy ran out of recursion depth")
    except NotImplementedError as exc:  # sympy's way of saying it cannot decide
        return CheckResult("unproven", f"sympy could not decide: {exc}")
    except (ValueError, TypeError, ArithmeticError, AttributeError) as exc:
        return CheckResult("crashed", f"sympy raised {type(exc).__name__}: {exc}")


__all__ = [
    "CLAIM_KINDS",
    "RELATIONS",
    "CheckResult",
    "Claim",
    "ClaimError",
    "Context",
    "Written",
    "check_claim",
    "check_equation_latex",
    "check_number",
    "check_quiz_answer",
    "parse_value_text",
    "read_number",
    "round_significant",
    "show",
    "split_equation",
    "split_relation",
    "value_text",
]
