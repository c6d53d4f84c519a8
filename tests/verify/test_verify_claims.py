"""Every claim kind passing and failing, on the real numbers of "Goodbye to recurrence"."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from coursekit.verify.claims import (
    Claim,
    ClaimError,
    Context,
    check_claim,
    check_number,
    check_quiz_answer,
    read_number,
    round_significant,
)

ASSUME = {"positive": ["T", "d", "d_h", "d_x", "d_k", "d_v"], "integer": ["T"]}
FORMULAS = {"recurrence": "T*(d_h**2 + d_h*d_x)", "grid": "T**2*d_k + T**2*d_v"}
EQUAL = {"d_h": "d", "d_x": "d", "d_k": "d", "d_v": "d"}
W512 = {"d_h": 512, "d_x": 512, "d_k": 512, "d_v": 512}


@pytest.fixture(scope="module")
def ctx() -> Context:
    return Context(ASSUME, FORMULAS)


def run(ctx: Context, **data: Any) -> Any:
    data.setdefault("id", "c")
    return check_claim(ctx, Claim.from_mapping(data))


# -- identity ------------------------------------------------------------------------------------


def test_ratio_identity_holds(ctx: Context) -> None:
    r = run(ctx, kind="identity", lhs="grid / recurrence", rhs="T/d", where=EQUAL)
    assert r.status == "ok", r.message


def test_ratio_identity_false_shows_both_sides(ctx: Context) -> None:
    r = run(ctx, kind="identity", lhs="grid / recurrence", rhs="d/T", where=EQUAL)
    assert r.status == "false"
    assert "is T/d, not d/T" in r.message and "differ at" in r.message


def test_identity_without_substitution_is_false(ctx: Context) -> None:
    r = run(ctx, kind="identity", lhs="grid / recurrence", rhs="T/d")
    assert r.status == "false"


def test_identity_needing_assumptions(ctx: Context) -> None:
    assert run(ctx, kind="identity", lhs="sqrt(d**2)", rhs="d").ok
    assert run(ctx, kind="identity", lhs="sqrt(x**2)", rhs="x").status == "false"


# -- solve ---------------------------------------------------------------------------------------


def test_crossing_is_t_equals_d(ctx: Context) -> None:
    r = run(
        ctx,
        kind="solve",
        equation="grid = recurrence",
        where=EQUAL,
        solutions=["d"],
        **{"for": "T"},
    )
    assert r.status == "ok", r.message


def test_crossing_wrong_solution_set(ctx: Context) -> None:
    r = run(
        ctx,
        kind="solve",
        equation="grid = recurrence",
        where=EQUAL,
        solutions=["d", 0],
        **{"for": "T"},
    )
    assert r.status == "false"
    assert "gives [d], the claim says [d, 0]" in r.message


def test_crossing_at_512_has_a_value(ctx: Context) -> None:
    r = run(
        ctx, kind="solve", lhs="grid", rhs="recurrence", where=W512, solutions=[512], **{"for": "T"}
    )
    assert r.status == "ok" and r.value == "512"
    bad = run(
        ctx, kind="solve", lhs="grid", rhs="recurrence", where=W512, solutions=[500], **{"for": "T"}
    )
    assert bad.status == "false" and "[512]" in bad.message


def test_solve_without_positivity_finds_zero_too() -> None:
    plain = Context({}, FORMULAS)
    r = run(
        plain,
        kind="solve",
        equation="grid = recurrence",
        where=EQUAL,
        solutions=["d"],
        **{"for": "T"},
    )
    assert r.status == "false" and "0" in r.message


# -- value ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "t", "value"),
    [
        ("recurrence", 50, 26214400),
        ("grid", 50, 2560000),
        ("grid", 1000, 1024000000),
        ("recurrence", 1000, 524288000),
    ],
)
def test_lesson_values(ctx: Context, expr: str, t: int, value: int) -> None:
    r = run(ctx, kind="value", expr=expr, where={"T": t, **W512}, value=value)
    assert r.status == "ok", r.message
    assert r.value == str(value)


def test_value_off_by_one_shows_both(ctx: Context) -> None:
    r = run(
        ctx,
        kind="value",
        expr="recurrence",
        where={"T": 50, "d_h": 512, "d_x": 512},
        value=26214401,
    )
    assert r.status == "false"
    assert (
        r.message == "recurrence at T=50, d_h=512, d_x=512 is 26,214,400, the claim says 26,214,401"
    )


def test_about_ten_times_less_with_tolerance(ctx: Context) -> None:
    r = run(
        ctx,
        kind="value",
        expr="recurrence / grid",
        where={"T": 50, **W512},
        value=10,
        tolerance=0.05,
    )
    assert r.status == "ok" and r.value == "256/25"
    r = run(
        ctx,
        kind="value",
        expr="recurrence / grid",
        where={"T": 50, **W512},
        value=10,
        tolerance=0.01,
    )
    assert r.status == "false" and "10.24" in r.message


def test_ratio_at_1000_rounded(ctx: Context) -> None:
    where = {"T": 1000, **W512}
    r = run(ctx, kind="value", expr="grid / recurrence", where=where, value=1.95, digits=3)
    assert r.status == "ok" and r.value == "125/64"
    r = run(ctx, kind="value", expr="grid / recurrence", where=where, value=1.96, digits=3)
    assert r.status == "false" and "1.95 to 3 significant digits" in r.message
    r = run(ctx, kind="value", expr="grid / recurrence", where=where, value=1.95, digits=4)
    assert r.status == "false"
    assert run(ctx, kind="value", expr="1000/512", value="1000/512").ok


def test_digits_and_tolerance_together_as_the_lesson_writes_them(ctx: Context) -> None:
    where = {"T": 50, **W512}
    ok = run(
        ctx, kind="value", expr="recurrence / grid", where=where, value=10, tolerance=0.05, digits=2
    )
    assert ok.status == "ok", ok.message
    # the rounding holds (10.24 -> 10) but the tolerance does not: both must hold
    r = run(
        ctx, kind="value", expr="recurrence / grid", where=where, value=10, tolerance=0.01, digits=2
    )
    assert r.status == "false"


@pytest.mark.parametrize(
    ("q", "digits", "rounded"),
    [
        (Fraction(256, 25), 2, Fraction(10)),
        (Fraction(125, 64), 3, Fraction(195, 100)),
        (Fraction(999, 100), 2, Fraction(10)),
        (Fraction(-125, 64), 2, Fraction(-2)),
        (Fraction(26214400), 3, Fraction(26200000)),
        (Fraction(1, 3000), 2, Fraction(33, 100000)),
    ],
)
def test_round_significant(q: Fraction, digits: int, rounded: Fraction) -> None:
    assert round_significant(q, digits) == rounded


def test_value_still_symbolic_is_false(ctx: Context) -> None:
    r = run(ctx, kind="value", expr="recurrence", where={"T": 50}, value=1)
    assert r.status == "false" and "still depends on d_h, d_x" in r.message


def test_irrational_value_by_digits(ctx: Context) -> None:
    assert run(ctx, kind="value", expr="sqrt(2)", value=1.414, digits=4).ok
    assert run(ctx, kind="value", expr="sqrt(2)", value="sqrt(8)/2").ok
    assert run(ctx, kind="value", expr="sqrt(2)", value=1.41).status == "false"


# -- order ---------------------------------------------------------------------------------------


def test_orders_of_growth(ctx: Context) -> None:
    assert run(ctx, kind="order", expr="recurrence", order="T*d**2", where=EQUAL).ok
    assert run(ctx, kind="order", expr="grid", order="T**2*d", where=EQUAL).ok


def test_orders_of_growth_swapped_are_false(ctx: Context) -> None:
    r = run(ctx, kind="order", expr="recurrence", order="T**2*d", where=EQUAL)
    assert r.status == "false" and "grows faster in d" in r.message
    r = run(ctx, kind="order", expr="grid", order="T*d**2", where=EQUAL)
    assert r.status == "false" and "grows faster in T" in r.message


def test_order_too_generous_is_false_for_theta_but_fine_for_big_o(ctx: Context) -> None:
    r = run(ctx, kind="order", expr="grid", order="T**2*d**2", where=EQUAL)
    assert r.status == "false" and "grows more slowly" in r.message
    assert run(ctx, kind="order", expr="grid", order="T**2*d**2", where=EQUAL, bound="O").ok


def test_order_lower_terms_and_negative_lead(ctx: Context) -> None:
    assert run(ctx, kind="order", expr="3*T*d**2 + T*d + 7", order="T*d**2").ok
    assert run(ctx, kind="order", expr="-T*d**2", order="T*d**2").status == "false"


def test_order_with_undeclared_width_counts_it_as_a_variable(ctx: Context) -> None:
    r = run(ctx, kind="order", expr="recurrence", order="T*d_h**2")
    assert r.status == "false"  # T*d_h*d_x grows faster in d_x
    assert run(ctx, kind="order", expr="recurrence", order="T*d_h**2", variables=["T", "d_h"]).ok


def test_order_non_polynomial_single_variable(ctx: Context) -> None:
    assert run(ctx, kind="order", expr="T*log(T) + T", order="T*log(T)").ok
    assert run(ctx, kind="order", expr="T**2", order="T*log(T)").status == "false"


# Issue 12: one semantics of Θ for every branch (every variable >= N; each may grow on its own).


def test_t_squared_over_d_is_not_theta_t_it_is_false_not_unproven(ctx: Context) -> None:
    r = run(ctx, kind="order", expr="T**2/d", order="T")
    assert r.status == "false", r.message
    assert "grows faster in T" in r.message


def test_non_polynomial_true_on_the_diagonal_but_false_per_variable(ctx: Context) -> None:
    # along T = d = t the ratio is log(t)/log(t) = 1; for a fixed d it grows as log(T)
    r = run(ctx, kind="order", expr="T*log(T)/log(d)", order="T")
    assert r.status == "false", r.message
    assert "d fixed" in r.message and "as T grows" in r.message
    r = run(ctx, kind="order", expr="T*exp(T - d)", order="T")
    assert r.status == "false" and "with d fixed" in r.message, r.message


def test_order_is_the_same_for_polynomial_and_other_shapes(ctx: Context) -> None:
    # both fall short of T*d**2 along the diagonal, whatever branch decides them
    assert run(ctx, kind="order", expr="T*d + d**2", order="T*d**2").status == "false"
    assert run(ctx, kind="order", expr="T*d/(T + d)", order="T").status == "false"
    assert run(ctx, kind="order", expr="sqrt(T**3/d)", order="T").status == "false"
    assert run(ctx, kind="order", expr="T*log(d) + T", order="T*log(d)").ok
    assert run(ctx, kind="order", expr="T**2/d + T/d", order="T**2/d").ok
    assert run(ctx, kind="order", expr="T**2/d + T", order="T**2/d").status == "false"
    assert run(ctx, kind="order", expr="T**2/d", order="T**2", bound="O").ok
    # a ratio of polynomials with one dominant term each grows as the ratio of those terms
    assert run(ctx, kind="order", expr="T**2*d/(T*d + 1)", order="T").ok
    r = run(ctx, kind="order", expr="T**3*d/(T*d + 1)", order="T")
    assert r.status == "false" and "grows as T**2, faster in T" in r.message
    r = run(ctx, kind="order", expr="T*d/(T*d**2 + 1)", order="T")
    assert r.status == "false" and "grows as 1/d, more slowly in T, d" in r.message
    r = run(ctx, kind="order", expr="T**2", order="T**2/d", bound="O")
    assert r.status == "false" and "grows faster in d" in r.message


# Issue 12: degenerate `digits` and `tolerance` are refused with a message that says why.


def read_run(ctx: Context, **data: Any) -> Any:
    """As a lesson's claim is checked: an unreadable claim is an error verdict."""
    return check_claim(ctx, Claim.read({"id": "c", **data}))


def test_zero_digits_is_refused_instead_of_accepting_anything(ctx: Context) -> None:
    r = read_run(
        ctx,
        kind="value",
        expr="recurrence",
        where={"T": 50, "d_h": 512, "d_x": 512},
        value=0,
        digits=0,
    )
    assert r.status == "error" and r.field == "digits"
    assert "from 1 to 30" in r.message and "round every number to 0" in r.message


@pytest.mark.parametrize("tolerance", [1, 1.5, 100])
def test_a_relative_tolerance_of_one_or_more_is_refused(ctx: Context, tolerance: float) -> None:
    r = read_run(ctx, kind="value", expr="T", where={"T": 7}, value=5, tolerance=tolerance)
    assert r.status == "error" and r.field == "tolerance" and "below 1" in r.message


def test_a_tolerance_around_zero_is_refused(ctx: Context) -> None:
    r = run(ctx, kind="value", expr="T - 7", where={"T": 7}, value=0, tolerance=0.01)
    assert r.status == "error" and r.field == "tolerance" and "relative to 0" in r.message
    assert run(ctx, kind="value", expr="T - 7", where={"T": 7}, value=0).ok


# -- inequality ----------------------------------------------------------------------------------


def test_grid_cheaper_while_t_below_d(ctx: Context) -> None:
    r = run(ctx, kind="inequality", relation="grid < recurrence", when="T < d", where=EQUAL)
    assert r.status == "ok", r.message


def test_inequality_false_gives_counterexample(ctx: Context) -> None:
    r = run(ctx, kind="inequality", relation="grid < recurrence", when=["T > d"], where=EQUAL)
    assert r.status == "false" and "fails at" in r.message and "grid is" in r.message
    r = run(ctx, kind="inequality", lhs="grid", op="<", rhs="recurrence", where=EQUAL)
    assert r.status == "false"


def test_inequality_nonstrict_and_reversed(ctx: Context) -> None:
    assert run(ctx, kind="inequality", relation="recurrence >= grid", when="T <= d", where=EQUAL).ok
    assert run(ctx, kind="inequality", relation="recurrence > grid", when="d > T", where=EQUAL).ok


def test_inequality_that_sympy_cannot_prove_is_unproven(ctx: Context) -> None:
    r = run(ctx, kind="inequality", relation="sin(x) < 2")
    assert r.status == "unproven" and "could not prove" in r.message


# -- malformed claims ----------------------------------------------------------------------------


def test_claim_field_syntax_error_points_at_field(ctx: Context) -> None:
    r = run(ctx, kind="identity", lhs="grid / recurrence", rhs="T/(d")
    assert r.status == "error" and r.field == "rhs" and r.offset is not None


def test_claim_hostile_field_is_an_error(ctx: Context) -> None:
    r = run(ctx, kind="value", expr="__import__('os').system('touch /tmp/x')", value=0)
    assert r.status == "error" and r.field == "expr"


def test_claim_unknown_field_or_kind() -> None:
    with pytest.raises(ClaimError):
        Claim.from_mapping({"id": "x", "kind": "identity", "lsh": "a"})
    with pytest.raises(ClaimError):
        Claim.from_mapping({"id": "x", "kind": "theorem"})
    bad = Claim.read({"id": "x", "kind": "theorem"})
    assert bad.kind == "invalid"
    assert check_claim(Context(), bad).status == "error"


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "value", "expr": "Max(x, sqrt(x))", "value": 1},
        {"kind": "identity", "lhs": "Max(x, sqrt(x))", "rhs": "x"},
    ],
    ids=["value", "identity"],
)
def test_a_substitution_sympy_refuses_is_crashed_not_an_exception(
    ctx: Context, fields: dict[str, Any]
) -> None:
    """At x = -1 sympy must compare I with -1, and raises ValueError (seen in stop 40's
    hypothesis run of test_substitution.py): a result the check reports at its claim."""
    r = run(ctx, where={"x": -1}, **fields)
    assert r.status == "crashed"
    assert "sympy raised ValueError" in r.message and "not comparable" in r.message


def test_claim_missing_field(ctx: Context) -> None:
    r = run(ctx, kind="value", expr="recurrence")
    assert r.status == "error" and r.field == "value"


def test_claim_json_round_trip() -> None:
    claim = Claim.from_mapping(
        {
            "id": "c",
            "kind": "solve",
            "equation": "a = b",
            "for": "T",
            "where": {"d": 512},
            "solutions": [512],
        }
    )
    assert Claim.from_json(claim.to_json()) == claim


# -- numbers in the prose ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("26,214,400", 26214400),
        ("26214400", 26214400),
        ("2,560,000", 2560000),
        ("1,024,000,000", 1024000000),
        ("524,288,000", 524288000),
        ("1.95", Fraction(125, 64)),
        ("≈ 1.95", "125/64"),
        ("2.56 million", 2560000),
        ("1.024 billion", 1024000000),
        ("512", "512"),
        ("ten", 10),
        ("26\u202f214\u202f400", 26214400),
        ("26{,}214{,}400", 26214400),
        ("9.8%", Fraction(98, 1000)),
        ("−3", -3),
    ],
)
def test_numbers_written_in_the_prose_match(text: str, value: Any) -> None:
    assert check_number(text, value).ok


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("26,214,401", 26214400),
        ("1.96", Fraction(125, 64)),
        ("1.9", Fraction(125, 64)),
        ("2.57 million", 2560000),
        ("11", Fraction(256, 25)),
    ],
)
def test_numbers_that_disagree_fail_showing_both(text: str, value: Any) -> None:
    r = check_number(text, value, subject="claim rec-t50")
    assert r.status == "false"
    assert text in r.message and "claim rec-t50 computes" in r.message


def test_rounded_integer_display() -> None:
    assert check_number("10", Fraction(256, 25)).ok  # 10.24 to the unit is 10
    assert check_number("10", Fraction(268, 25)).status == "false"  # 10.72 is 11 to the unit
    assert check_number(
        "10", Fraction(268, 25), tolerance=0.1
    ).ok  # but within the claim's tolerance
    assert check_number("26,214,400", 26214401).status == "false"  # integers are exact to the unit


@pytest.mark.parametrize("text", ["26,21,4400", "1,95", "lots", "", "1.2.3"])
def test_unreadable_numbers(text: str) -> None:
    assert check_number(text, 1).status == "error"


def test_read_number_precision() -> None:
    w = read_number("2.56 million")
    assert w.value == 2560000 and w.half_ulp == 5000


def test_quiz_answers() -> None:
    assert check_quiz_answer(512, 0, "512").ok
    assert check_quiz_answer(510, 5, "512").ok
    r = check_quiz_answer(500, 0, "512", subject="claim crossing-512")
    assert r.status == "false" and "500" in r.message and "512" in r.message


def test_numbers_too_long_for_str_are_shown_not_crashed_on() -> None:
    """Python refuses int -> str past 4,300 digits; a claim's value can be that large."""
    huge = 10**5000 + 7
    from coursekit.verify.claims import parse_value_text, show, value_text

    assert parse_value_text(value_text(huge)) == huge
    assert parse_value_text(value_text(Fraction(huge, 3))) == Fraction(huge, 3)
    assert show(Fraction(huge)).startswith("1.000000000e+5000")
    false = check_number("5", huge)
    assert false.status == "false" and "1.000000000e+5000" in false.message
    assert check_quiz_answer(5, 0, huge).status == "false"
    # e**20000 is printed by sympy as a float with a 8,686-digit integer part
    from coursekit.verify import MathsSpec, verify_document

    spec = MathsSpec.build(
        claims=[{"id": "c", "kind": "value", "expr": "exp(20000)", "value": "exp(20000)"}],
        numbers=[("c", "5")],
        quiz=[("c", "5", "0")],
    )
    verdicts = {v.subject: v for v in verify_document(spec, 30)}
    assert verdicts["claim"].status == "ok", verdicts["claim"].message
    assert verdicts["number"].status == "false" and "e+8685" in verdicts["number"].message
    assert verdicts["quiz"].status == "false"


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_quiz_answer_margin_or_tolerance_is_an_error(bad: float) -> None:
    """YAML reads `margin: 1e999` as infinity: a diagnostic, not an OverflowError."""
    for answer, margin in ((bad, 0), (512, bad)):
        r = check_quiz_answer(answer, margin, "512")
        assert r.status == "error" and "cannot read quiz answer" in r.message
    with pytest.raises(ClaimError, match="tolerance"):
        Claim.from_mapping({"id": "c", "kind": "value", "expr": "T", "value": 1, "tolerance": bad})
    claim = Claim.read({"id": "c", "kind": "value", "expr": "T", "value": 1, "tolerance": bad})
    assert claim.error is not None and claim.error_field == "tolerance"
