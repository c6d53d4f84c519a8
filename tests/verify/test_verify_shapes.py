"""Matrix shapes (coursekit.verify.shapes): products, transposes, row-wise functions, counts."""

from __future__ import annotations

import pytest

from coursekit.verify import Claim, Context, MathsSpec, check_claim, parse_formula, verify_document
from coursekit.verify.shape_count import cost, memory
from coursekit.verify.shapes import (
    ShapeError,
    Shapes,
    declared_shape,
    infer,
)
from coursekit.verify.tree import Call, Name
from coursekit.verify.tree import formula_text as show

DECLARED = {
    "Q": (["T", "d_k"], ["queries", "features"]),
    "K": (["T", "d_k"], ["keys", "features"]),
    "V": (["T", "d_v"], ["keys", "values"]),
    "q": (["d_k"], None),
    "k": (["d_k"], None),
}


def shapes(formulas: dict[str, str] | None = None) -> Shapes:
    return Context(
        {"positive": ["T", "d_k", "d_v"]}, formulas, shapes=DECLARED, rowwise=["softmax"]
    ).shapes


def shape_of(text: str) -> str:
    return infer(parse_formula(text), shapes()).text()


def error_of(text: str) -> str:
    with pytest.raises(ShapeError) as caught:
        infer(parse_formula(text), shapes())
    return caught.value.message


def test_dot_t_is_the_transpose_node() -> None:
    assert parse_formula("K.T") == Call("transpose", (Name("K", 0),), 0)
    assert show(parse_formula("softmax(Q*K.T/sqrt(d_k))*V")) == "softmax(Q*K.T/sqrt(d_k))*V"


def test_other_attributes_are_still_refused() -> None:
    from coursekit.verify import FormulaError

    with pytest.raises(FormulaError, match="attribute access"):
        parse_formula("K.shape")


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("Q*K.T", "T×T"),
        ("softmax(Q*K.T/sqrt(d_k))*V", "T×d_v"),
        ("Q.T*Q", "d_k×d_k"),
        ("q.T*k", "a scalar"),  # a 1×1 product is a number again
        ("q*k.T", "d_k×d_k"),
        ("2*Q - Q/sqrt(d_k)", "T×d_k"),
        ("(Q*K.T)**2", "T×T"),
        ("T*d_k + sqrt(d_k)", "a scalar"),
        ("Hadamard(Q, Q)*K.T", "T×T"),
    ],
)
def test_shapes_that_fit(text: str, shape: str) -> None:
    assert shape_of(text) == shape


@pytest.mark.parametrize(
    ("text", "named"),
    [
        # a missing transpose
        ("Q*K", ["Q is T×d_k", "K is T×d_k", "needs K transposed", "Q*K.T"]),
        ("K*Q", ["K is T×d_k", "Q is T×d_k", "needs Q transposed"]),
        # d_k and d_v swapped in a product
        ("Q*V.T", ["Q is T×d_k", "V.T is d_v×T", "columns of Q (d_k)", "rows of V.T (d_v)"]),
        ("softmax(Q*V.T)*K", ["Q is T×d_k", "V.T is d_v×T"]),
        ("(Q*K.T)*Q.T", ["Q*K.T is T×T", "Q.T is d_k×T"]),
        # the softmax over the wrong axis (rows are keys, the normalised axis queries)
        ("softmax(K*Q.T/sqrt(d_k))*V", ["normalises each row over queries", "keys", "wrong axis"]),
        ("V.T*softmax(Q*K.T)", ["normalises each row over keys", "rows (queries)", "wrong axis"]),
        # products that conform in size but sum unrelated axes
        ("K.T*Q", ["columns of K.T (keys)", "rows of Q (queries)"]),
        # functions of numbers, sums and powers
        ("sqrt(Q)", ["sqrt takes a scalar", "Q is T×d_k"]),
        ("exp(Q*K.T)", ["exp takes a scalar", "T×T"]),
        ("Q + Q*K.T", ["Q is T×d_k", "Q*K.T is T×T"]),
        ("Q + 1", ["Q is T×d_k", "1 is a scalar"]),
        ("Hadamard(Q, V)", ["multiplies entry by entry", "Q is T×d_k", "V is T×d_v"]),
        ("T/Q", ["divides by Q", "T×d_k"]),
        ("Q**2", ["T×d_k", "not square"]),
        ("softmax(d_k)", ["row by row", "d_k is a scalar"]),
    ],
)
def test_shape_errors_name_the_shapes(text: str, named: list[str]) -> None:
    message = error_of(text)
    for part in named:
        assert part in message, f"{part!r} not in {message!r}"


def test_without_axes_a_transposed_product_still_conforms() -> None:
    bare = Shapes({"Q": declared_shape(["T", "d_k"]), "K": declared_shape(["T", "d_k"])})
    assert infer(parse_formula("K.T*Q"), bare).text() == "d_k×d_k"


def test_a_softmax_not_declared_rowwise_on_a_matrix_says_how_to_declare_it() -> None:
    bare = Shapes({"S": declared_shape(["T", "T"])})
    with pytest.raises(ShapeError, match="rowwise: true"):
        infer(parse_formula("softmax(S)"), bare)


@pytest.mark.parametrize(
    ("dims", "axes", "why"),
    [
        (["T", "d", "2"], None, "at most two"),
        (["T", "2*d"], None, "must be a symbol"),
        (["T", "0"], None, "positive whole number"),
        (["T", "d"], ["rows"], "axes names 1 axes"),
    ],
)
def test_bad_declarations_are_refused(dims: list[str], axes: list[str] | None, why: str) -> None:
    with pytest.raises(ShapeError, match=why):
        declared_shape(dims, axes)


def test_costs_and_memory_are_counted_from_shapes_as_formulas() -> None:
    s = shapes({"scores": "Q*K.T", "out": "softmax(scores/sqrt(d_k))*V"})
    assert show(cost(parse_formula("scores"), s)) == "T*d_k*T"
    assert show(cost(parse_formula("out"), s)) == "T*d_k*T+T*T*d_v"
    assert show(memory(parse_formula("scores"), s)) == "T*T"
    assert show(memory(parse_formula("q.T*k"), s)) == "1"
    assert show(cost(parse_formula("2*T*d_k"), s)) == "0"


CTX_FORMULAS = {"scores": "Q*K.T", "out": "softmax(scores/sqrt(d_k))*V"}


def claim(**fields: object) -> tuple[str, str]:
    ctx = Context(
        {"positive": ["T", "d_k", "d_v"]}, CTX_FORMULAS, shapes=DECLARED, rowwise=["softmax"]
    )
    res = check_claim(ctx, Claim.from_mapping({"id": "c", **fields}))
    return res.status, res.message


def test_a_true_shape_claim() -> None:
    assert claim(kind="shape", expr="out", shape=["T", "d_v"]) == (
        "ok",
        "out is T×d_v (queries by values)",
    )
    assert claim(kind="shape", expr="q.T*k", shape=[])[0] == "ok"


def test_a_wrong_claimed_shape_names_both_shapes() -> None:
    status, message = claim(kind="shape", expr="out", shape=["T", "d_k"])
    assert status == "false" and "T×d_v" in message and "T×d_k" in message


def test_a_claimed_axis_that_is_wrong_names_the_axis() -> None:
    status, message = claim(kind="shape", expr="out", shape=["T", "d_v"], axes=["keys", "values"])
    assert status == "false" and "rows of out index queries" in message and "keys" in message


def test_a_shape_claim_over_a_broken_product_is_false_with_the_shapes() -> None:
    status, message = claim(kind="shape", expr="Q*K", shape=["T", "T"])
    assert status == "false" and "Q is T×d_k, K is T×d_k" in message


def test_where_renames_a_dimension_in_a_shape_claim() -> None:
    assert claim(kind="shape", expr="K.T*V", shape=["d_k", "d_k"], where={"d_v": "d_k"})[0] == "ok"
    assert claim(kind="shape", expr="K.T*V", shape=["d_k", "d_k"])[0] == "false"


def test_a_shape_claim_needs_its_shape() -> None:
    status, message = claim(kind="shape", expr="out")
    assert status == "error" and "needs shape" in message


def test_cost_and_memory_claims_derive_the_count() -> None:
    status, message = claim(kind="value", cost="scores", where={"T": 50, "d_k": 64}, value=160000)
    assert status == "ok" and "multiply-adds of scores" in message
    assert claim(kind="value", cost="scores", where={"T": 50, "d_k": 64}, value=160001)[0] == (
        "false"
    )
    assert claim(kind="value", memory="scores", where={"T": 1000}, value=10**6)[0] == "ok"
    assert claim(kind="order", cost="out", order="T**2*d_k", where={"d_v": "d_k"})[0] == "ok"
    assert claim(kind="order", cost="out", order="T*d_k", where={"d_v": "d_k"})[0] == "false"


def test_cost_beside_the_side_it_derives_is_malformed() -> None:
    assert claim(kind="value", cost="scores", expr="T", value=1)[0] == "error"
    assert claim(kind="identity", cost="scores", lhs="T", rhs="T")[0] == "error"
    assert claim(kind="inequality", cost="scores", rhs="T", op="<")[0] == "error"


def test_an_identity_ties_a_typed_cost_to_the_matrices() -> None:
    status, message = claim(kind="identity", cost="out", rhs="T**2*d_k + T**2*d_v")
    assert status == "ok" and "multiply-adds of out" in message
    assert claim(kind="identity", cost="out", rhs="2*T**2*d_k")[0] == "false"


def test_the_document_reports_each_shaped_formula() -> None:
    spec = MathsSpec.build(
        assume={"positive": ["T", "d_k", "d_v"]},
        formulas={"width": "d_k + d_v", "scores": "Q*K", "out": "softmax(scores)*V"},
        shapes=DECLARED,
        rowwise=["softmax"],
    )
    verdicts = [v for v in verify_document(spec, isolate=False) if v.subject == "shape"]
    # `width` is scalar: nothing to check; `out` uses the broken `scores`: reported there alone
    assert [(v.key, v.status) for v in verdicts] == [("scores", "false")]
    assert "needs K transposed" in verdicts[0].message and verdicts[0].offset == 0
    assert MathsSpec.from_json(spec.to_json()) == spec


def test_a_spec_without_shapes_keeps_its_fingerprint_shape() -> None:
    spec = MathsSpec.build(formulas={"f": "T*d"})
    assert "shapes" not in spec.to_json() and "rowwise" not in spec.to_json()


def test_an_offset_points_at_the_product_inside_the_formula() -> None:
    spec = MathsSpec.build(formulas={"out": "V.T + Q*K"}, shapes=DECLARED)
    (v,) = [v for v in verify_document(spec, isolate=False) if v.subject == "shape"]
    assert v.status == "false" and v.offset == len("V.T + ")


def test_a_count_over_shapes_that_do_not_fit_is_refused() -> None:
    status, message = claim(kind="value", cost="softmax(K*Q.T)*V", where={"T": 2}, value=1)
    assert status == "error" and "wrong axis" in message
    status, message = claim(kind="value", memory="Q*K", where={"T": 2}, value=1)
    assert status == "error" and "needs K transposed" in message


def test_a_number_claim_over_a_matrix_says_what_to_write_instead() -> None:
    status, message = claim(kind="value", expr="Q*K.T", where={"T": 2, "d_k": 2}, value=4)
    assert status == "error" and "T×T matrix" in message and "shape claim" in message
    status, message = claim(kind="identity", lhs="scores", rhs="K*Q.T")
    assert status == "error" and "cost: or memory:" in message


def test_a_number_claim_over_shapes_that_do_not_fit_is_false() -> None:
    status, message = claim(kind="identity", lhs="sqrt(Q*K)", rhs="1")
    assert status == "false" and "Q is T×d_k, K is T×d_k" in message


def test_a_scalar_made_of_vectors_is_a_number() -> None:
    status, _ = claim(kind="identity", lhs="q.T*k + 0", rhs="q.T*k")
    assert status == "ok"


def test_matrices_do_not_commute_in_sympy() -> None:
    from coursekit.verify.symbolic import to_sympy

    ctx = Context(shapes=DECLARED)
    forward = to_sympy(parse_formula("Q*K.T"), ctx.table)
    backward = to_sympy(parse_formula("K.T*Q"), ctx.table)
    assert forward != backward
    assert to_sympy(parse_formula("T*d_k"), ctx.table) == to_sympy(
        parse_formula("d_k*T"), ctx.table
    )


def test_a_chain_of_formulas_thousands_deep_is_checked_without_a_traceback() -> None:
    chain = {"f0": "Q*K.T"} | {f"f{i}": f"2*f{i - 1}" for i in range(1, 3000)}
    chain["last"] = "f2999*K"  # rows of K are keys, as are the columns of Q*K.T
    spec = MathsSpec.build(formulas=chain, shapes=DECLARED)
    verdicts = {v.key: v for v in verify_document(spec, isolate=False) if v.subject == "shape"}
    assert verdicts["f2999"].status == "ok" and verdicts["f2999"].message.startswith("f2999 is T×T")
    assert verdicts["last"].status == "ok"
    chain["f0"] = "Q*K"
    spec = MathsSpec.build(formulas=chain, shapes=DECLARED)
    bad = [v for v in verify_document(spec, isolate=False) if v.subject == "shape"]
    assert [(v.key, v.status) for v in bad] == [("f0", "false")]  # reported once, where it is


def test_counting_a_doubling_chain_is_refused_not_hung() -> None:
    chain = {"f0": "Q*K.T"} | {f"f{i}": f"f{i - 1} + f{i - 1}" for i in range(1, 60)}
    ctx = Context(formulas=chain, shapes=DECLARED)
    res = check_claim(
        ctx, Claim.from_mapping({"id": "c", "kind": "order", "cost": "f59", "order": "T"})
    )
    assert res.status == "error" and "more than 10000 matrix products" in res.message
    res = check_claim(
        ctx, Claim.from_mapping({"id": "c", "kind": "order", "cost": "f3", "order": "T**2*d_k"})
    )
    assert res.status == "ok" and "T*d_k*T+" in res.message


def test_a_claim_on_a_deep_chain_needs_no_deep_stack() -> None:
    chain = {"f0": "Q*K.T"} | {f"f{i}": f"2*f{i - 1}" for i in range(1, 3000)}
    ctx = Context(formulas=chain, shapes=DECLARED)
    fields = {"id": "c", "kind": "shape", "expr": "f2999", "shape": ["T", "T"]}
    assert check_claim(ctx, Claim.from_mapping(fields)).status == "ok"


def test_a_display_whose_shapes_do_not_fit_is_false_with_the_shapes() -> None:
    from coursekit.verify import check_equation_latex

    ctx = Context({"positive": ["T", "d_k"]}, {"scores": "Q*K.T"}, shapes=DECLARED)
    res = check_equation_latex("QK", "scores", ctx, name="scores")
    assert res.status == "false" and "Q is T×d_k, K is T×d_k" in res.message
    assert check_equation_latex("T d_k", "T*d_k", ctx).status == "ok"


def test_the_readers_latex_is_shape_checked_and_its_other_constructs_left_alone() -> None:
    from coursekit.verify import parse_latex
    from coursekit.verify.shapes import shape_misfit

    s = shapes()
    good = r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
    assert infer(parse_latex(good), s).text() == "T×d_v"
    assert "needs K transposed" in (shape_misfit(parse_latex(r"QK"), s) or "")
    assert "wrong axis" in (shape_misfit(parse_latex(r"\mathrm{softmax}(KQ^\top) V"), s) or "")
    assert shape_misfit(parse_latex(r"\sum_{j=1}^{T} Q"), s) is None  # a sum: not judged
