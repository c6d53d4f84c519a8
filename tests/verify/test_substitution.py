"""Claims substitute by exact replacement: it must compute what sympy's `subs` computes.

`coursekit.verify.claims.context._subs` replaces symbols with `xreplace` (a third of the cost of
`subs(simultaneous=True)`). That is sound only because every key is a symbol and no formula the
grammar builds binds a variable; these random formulas, from every construct the grammar has,
hold it to that.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coursekit.verify.claims.context import Context, _subs
from coursekit.verify.expr import FormulaError

pytest.importorskip("sympy")

NAMES = ("x", "y", "n", "d_h", "T")
FUNCTIONS = ("sqrt", "exp", "log", "ln", "sigmoid", "Abs", "floor", "Max", "Min", "softmax")


def _formula(depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(
        st.sampled_from(NAMES),
        st.integers(0, 12).map(str),
        st.sampled_from(("1/2", "0.5", "pi", "E")),
    )
    if depth == 0:
        return leaf
    inner = _formula(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(inner, st.sampled_from("+-*/^"), inner).map(lambda t: f"({t[0]}){t[1]}({t[2]})"),
        st.tuples(st.sampled_from(FUNCTIONS), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})" if t[0] in ("Max", "Min") else f"{t[0]}({t[1]})"
        ),
        inner.map(lambda a: f"-({a})"),
    )


VALUES = st.one_of(
    st.integers(-5, 5).map(str),
    st.sampled_from(("1/3", "x + 1", "y*n", "T/d_h", "x")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _formula(3),
    st.dictionaries(st.sampled_from(NAMES), VALUES, min_size=1, max_size=3),
    st.booleans(),
)
@example("Max(x, sqrt(-(x)))", {"x": "0"}, True)  # (hypothesis found it: see below)
def test_exact_replacement_is_what_subs_computes(
    text: str, where: dict[str, str], pos: bool
) -> None:
    ctx = Context({"positive": ["x", "T"]} if pos else None, {"f": "x*y + 1"})
    try:
        expr = ctx.expr(text, "expr")
        mapping: dict[Any, Any] = {
            ctx.table.symbol(name): ctx.expr(value, "where") for name, value in where.items()
        }
    except FormulaError:
        return  # refused before sympy sees it: nothing is substituted
    # What sympy's own substitution does, a refusal included (Max(x, sqrt(x)) at x = -1 asks
    # sympy to compare I: both raise): the property is sameness, not that sympy can always.
    try:
        expected: Any = expr.subs(mapping, simultaneous=True)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)):
            _subs(expr, mapping)
        return
    assert _subs(expr, mapping) == expected


def test_a_substitution_sympy_refuses_is_refused_alike() -> None:
    """Regression (hypothesis found it): `Max(x, sqrt(x))` at x = -1 makes sympy compare I,
    and its `subs` raises; the test's property failed with that error, not on a difference."""
    ctx = Context(None, {"f": "x*y + 1"})
    expr = ctx.expr("Max(x, sqrt(x))", "expr")
    mapping = {ctx.table.symbol("x"): ctx.expr("-1", "where")}
    with pytest.raises(ValueError):
        expr.subs(mapping, simultaneous=True)
    with pytest.raises(ValueError):
        _subs(expr, mapping)


def test_a_function_sympy_refuses_to_build_is_a_formula_error() -> None:
    """Regression (hypothesis found it): with `x` positive, `sqrt(-x)` is `I*sqrt(x)`, and
    sympy's `Max` refuses to order it as it is built: a `ValueError` out of the formula's
    reading, where a formula coursekit cannot build is a `FormulaError` at its column."""
    ctx = Context({"positive": ["x", "T"]}, {"f": "x*y + 1"})
    with pytest.raises(
        FormulaError, match=r"sympy cannot build Max\(\.\.\.\): .*comparable"
    ) as got:
        ctx.expr("Max(x, sqrt(-(x)))", "expr")
    assert got.value.offset == 0  # the call's column
    assert ctx.expr("Max(x, sqrt(x))", "expr") is not None  # what sympy can order still builds


def test_a_swap_is_simultaneous() -> None:
    ctx = Context()
    x, y = ctx.table.symbol("x"), ctx.table.symbol("y")
    assert _subs(ctx.expr("x - 2*y", "expr"), {x: y, y: x}) == ctx.expr("y - 2*x", "expr")
