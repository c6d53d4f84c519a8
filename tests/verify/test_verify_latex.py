"""The reader's LaTeX, parsed to the same names and expressions as the declared formulas."""

from __future__ import annotations

import pytest

from coursekit.verify.claims import Context, check_equation_latex
from coursekit.verify.expr import FormulaError, parse_formula
from coursekit.verify.latex import parse_latex, parse_latex_sides
from coursekit.verify.symbolic import SymbolTable, to_sympy

TABLE = SymbolTable({"positive": ["T", "d", "d_h", "d_x", "d_k", "d_v"], "integer": ["T"]})


def latex(text: str) -> object:
    return to_sympy(parse_latex(text), TABLE)


def formula(text: str) -> object:
    return to_sympy(parse_formula(text), TABLE)


@pytest.mark.parametrize(
    ("tex", "py"),
    [
        (r"2Td^2", "2*T*d**2"),
        (r"2T^2 d", "2*T**2*d"),
        (r"\frac{T}{d}", "T/d"),
        (r"T(d_h^2 + d_h d_x)", "T*(d_h**2 + d_h*d_x)"),
        (r"T\,(d_h^2 + d_h d_x)", "T*(d_h**2 + d_h*d_x)"),
        (r"T\,\left(d_h^{2} + d_h\, d_x\right)", "T*(d_h**2 + d_h*d_x)"),
        (r"T^2 d_k + T^2 d_v", "T**2*d_k + T**2*d_v"),
        (r"2 \cdot 50 \cdot 512^2", "26214400"),
        (r"26{,}214{,}400", "26214400"),
        (r"2 \times 50^2 \times 512", "2560000"),
        (r"\frac{1000}{512}", "1000/512"),
        (r"\frac12 T", "T/2"),
        (r"T/2d", "T/(2*d)"),
        (r"x^23", "3*x**2"),
        (r"W_{hh} h", "W_hh*h"),
        (r"\alpha_{ij} v_j", "alpha_ij*v_j"),
        (r"d_{\text{model}}", "d_model"),
        (r"\sqrt{d_k}", "sqrt(d_k)"),
        (r"\sqrt[3]{x}", "x**(1/3)"),
        (r"\exp(-x) + \tanh x", "exp(-x) + tanh(x)"),
        (r"\log_2 T", "log(T, 2)"),
        (r"\max(T, d)", "Max(T, d)"),
        (r"-T^2 + 1.5", "-T**2 + 1.5"),
        (r"\lambda \pi", "lamda*pi"),
        (r"\frac{\mathrm{grid}}{\mathrm{recurrence}}", "grid/recurrence"),
        (r"\frac{2T^2 d}{2T d^2}.", "T/d"),
        (r"2 T^2 d,", "2*T**2*d"),
    ],
)
def test_latex_agrees_with_formula_syntax(tex: str, py: str) -> None:
    assert latex(tex) == formula(py)


def test_equals_chain_and_labels() -> None:
    sides = parse_latex_sides(r"\text{recurrence} = T\,(d_h^2 + d_h d_x) = T d_h^2 + T d_h d_x")
    assert sides[0].node is None and sides[0].source == r"\text{recurrence}"
    assert [s.node is not None for s in sides] == [False, True, True]
    sides = parse_latex_sides(r"\mathrm{cost}_{\text{rec}} = 2Td^2")
    assert sides[0].node is None


@pytest.mark.parametrize(
    ("tex", "message"),
    [
        (r"\foo", "not supported"),
        (r"x_{i:j}", "subscript"),
        (r"(a", "expected ')'"),
        (r"a)", "unbalanced"),
        (r"2^{9^{9}}", "exceeds the limit"),
        (r"\text{a label} + 1", "inside an expression"),
        (r"x'", "primes"),
        (r"\frac{1}{0}", "division by zero"),
        ("", "empty"),
        ("0²", "'²'"),  # found by the fuzz test: a Unicode digit is not a digit here
        (r"\frac{d x", "found the end"),  # was an IndexError looking for the denominator
        (r"\text{a}_{b", "subscript"),  # an unclosed label is not a label
        (r"\Delta W", "\\Delta W"),
        (r"\sin \omega t", "\\sin"),
        ("x" * 5000, "longer than"),
    ],
)
def test_unsupported_latex_is_an_error_with_offset(tex: str, message: str) -> None:
    with pytest.raises(FormulaError) as info:
        parse_latex_sides(tex)
    assert message in info.value.message
    assert 0 <= info.value.offset <= len(tex)


def test_error_offset_points_into_the_latex() -> None:
    with pytest.raises(FormulaError) as info:
        parse_latex(r"T\,(d_h^2 + \foo)")
    assert info.value.offset == len(r"T\,(d_h^2 + ")


CTX = Context(
    {"positive": ["T", "d", "d_h", "d_x", "d_k", "d_v"], "integer": ["T"]},
    {
        "recurrence": "T*(d_h**2 + d_h*d_x)",
        "grid": "T**2*d_k + T**2*d_v",
        "ratio": "T/d",
        "rec_equal": "2*T*d**2",
        "grid_equal": "2*T**2*d",
    },
)


@pytest.mark.parametrize(
    ("tex", "name"),
    [
        (r"T\,(d_h^2 + d_h d_x)", "recurrence"),
        (r"\text{recurrence} = T(d_h^2 + d_h d_x)", "recurrence"),
        (r"T^2 d_k + T^2 d_v", "grid"),
        (r"T^2 (d_k + d_v)", "grid"),
        (r"\frac{T}{d}", "ratio"),
        (r"T/d", "ratio"),
        (r"2Td^2", "rec_equal"),
        (r"2T^2 d", "grid_equal"),
        (r"\mathrm{grid_equal} = 2T^2d", "grid_equal"),
    ],
)
def test_lesson_equations_match_their_formulas(tex: str, name: str) -> None:
    result = check_equation_latex(tex, name, CTX, name=name)
    assert result.status == "ok", result.message


@pytest.mark.parametrize(
    ("tex", "name"),
    [
        (r"\frac{d}{T}", "ratio"),
        (r"3Td^2", "rec_equal"),
        (r"T\,(d_h^2 + d_x^2)", "recurrence"),
        (r"\text{grid} = T^2 d_k + T^2 d_v = 2T^2 d_k", "grid"),
    ],
)
def test_mismatched_equations_fail_showing_both(tex: str, name: str) -> None:
    result = check_equation_latex(tex, name, CTX, name=name)
    assert result.status == "false"
    assert "the equation shows" in result.message and "but" in result.message


def test_mismatch_message_and_offset() -> None:
    result = check_equation_latex(r"\text{ratio} = \frac{d}{T}", "ratio", CTX, name="ratio")
    assert result.status == "false"
    assert "d/T" in result.message and "T/d" in result.message
    assert result.offset == len(r"\text{ratio} = ")


def test_standalone_check_without_context() -> None:
    assert check_equation_latex(r"\frac{T}{d}", "T/d").ok
    assert check_equation_latex(r"\frac{d}{T}", "T/d").status == "false"


def test_equation_syntax_error_is_an_error_result() -> None:
    result = check_equation_latex(r"\frac{T}{", "ratio", CTX, name="ratio")
    assert result.status == "error"
    assert result.offset is not None


@pytest.mark.parametrize("text", [r"\text{cost}_", r"\text{}_", r"x = \text{cost}_"])
def test_label_with_a_dangling_subscript_is_a_syntax_error(text: str) -> None:
    """Not an IndexError (which the worker reported as 'unproven: sympy failed')."""
    with pytest.raises(FormulaError):
        parse_latex_sides(text)


# -- the richer reading: relations, membership, names, applications ------------------------------


def test_relations_are_statements_with_their_kind() -> None:
    sides = parse_latex_sides(r"0 \le \alpha_{ij} < 1")
    assert [s.relation for s in sides] == ["", "\\le", "<"]
    assert all(s.node is not None for s in sides)
    assert [s.relation for s in parse_latex_sides(r"a \geq b \approx c \propto d \neq e")] == [
        "",
        "\\ge",
        "\\approx",
        "\\propto",
        "\\neq",
    ]


def test_membership_carries_the_shape() -> None:
    subject, space = parse_latex_sides(r"W_i^Q \in \mathbb{R}^{d_{\text{model}} \times d_k}")
    assert subject.node is not None and latex_to_py(subject.node) == "Label(W_i, Q)"
    assert space.relation == "\\in" and space.node is None and space.space == "R"
    assert space.shape is not None
    assert [latex_to_py(d) for d in space.shape] == ["d_model", "d_k"]
    scalar = parse_latex_sides(r"\alpha_{ij} \in \mathbb{R}")[1]
    assert scalar.shape == () and scalar.space == "R"


def latex_to_py(node: object) -> str:
    from coursekit.verify.latex.show import show

    return show(node)


def test_parse_latex_refuses_a_statement_that_is_not_an_equation() -> None:
    with pytest.raises(FormulaError, match=r"\\le"):
        parse_latex(r"x \le 1")
    with pytest.raises(FormulaError, match=r"\\in"):
        parse_latex(r"\mathbf{x} \in \mathbb{R}^d")


def test_an_inequality_is_not_checked_as_an_equation() -> None:
    result = check_equation_latex(r"T d^2 \le 2Td^2", "rec_equal", CTX, name="rec_equal")
    assert result.status == "error" and "\\le" in result.message


@pytest.mark.parametrize(
    ("tex", "shown"),
    [
        (r"\mathbf{Q} + Q + \mathcal{Q} + \hat Q", "mathbf_Q + Q + mathcal_Q + hat_Q"),
        (r"\mathbf W_{hh}", "mathbf_W_hh"),
        (r"h_{t-1}", "Indexed(h, t - 1)"),
        (r"p_{i,2j}", "Indexed(p, i, 2*j)"),
        (r"K^\top + K^{\mathsf{T}}", "transpose(K) + transpose(K)"),
        (r"i^{\text{th}} + t^{\mathrm{th}}", "Ordinal(i) + Ordinal(t)"),
        (r"H^{(0)} + h^{(l)}", "Label(H, 0) + Label(h, l)"),
        (r"\alpha(\mathbf q, \mathbf k)", "alpha(mathbf_q, mathbf_k)"),
        (r"\operatorname{softmax}(x)", "softmax(x)"),
        (r"\sum_{i=1}^{n} x_i", "Sum(x_i, i, 1, n)"),
        (r"\frac{\partial L}{\partial h_t}", "Derivative(L, h_t)"),
        (r"\|x\|_2 + |y|", "Norm(x, 2) + Abs(y)"),
        (r"a \odot b", "Hadamard(a, b)"),
        (r"\begin{aligned} a &= b \\ &= c \end{aligned}", "a = b = c"),
    ],
)
def test_constructs_read_as_documented(tex: str, shown: str) -> None:
    from coursekit.verify.latex.show import show_sides

    assert show_sides(parse_latex_sides(tex)) == shown


def test_a_declared_function_is_applied_never_multiplied() -> None:
    from coursekit.verify.latex.show import show

    with pytest.raises(FormulaError, match=r"L\(…\)"):
        parse_latex(r"L(\theta)")
    assert show(parse_latex(r"L(\theta)", functions={"L"})) == "L(theta)"
    assert show(parse_latex(r"T(d_h^2 + d_x)")) == "T*(d_h^2 + d_x)"  # a count times a sum


def test_transpose_is_the_same_node_in_both_syntaxes() -> None:
    from coursekit.verify.latex.show import show

    assert show(parse_formula("transpose(K)")) == show(parse_latex(r"K^\top")) == "transpose(K)"


def test_an_unknown_application_becomes_an_unevaluated_function() -> None:
    assert str(latex(r"\mathrm{softmax}(T) \cdot d")) == "d*softmax(T)"
