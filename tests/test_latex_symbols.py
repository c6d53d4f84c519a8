"""What counts as a symbol (see coursekit.latex_symbols)."""

from __future__ import annotations

import pytest

from coursekit.latex_names import formula_name, is_index
from coursekit.latex_symbols import declared_key, notation_key, symbols_in_markdown


def keys(markdown: str) -> list[str]:
    return [use.key for use in symbols_in_markdown(markdown)]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("$d_k$ and $W_{hh}$", ["d_{k}", "W_{hh}"]),
        ("$\\alpha_{ij}$", ["\\alpha_{ij}"]),
        ("$h_{t-1}$", ["h_{t-1}"]),
        ("$QK^\\top$", ["Q", "K"]),
        ("$d_h^2 + d_h d_x$", ["d_{h}", "d_{h}", "d_{x}"]),
        ("$\\mathbb{R}^{d_h}$", ["\\mathbb{R}", "d_{h}"]),
        ("$\\mathrm{softmax}(S)$", ["\\mathrm{softmax}", "S"]),
        ("$\\operatorname{softmax}(S)$", ["\\operatorname{softmax}", "S"]),
        ("$2 \\cdot 50 \\cdot 512^2 = 26{,}214{,}400$", []),
        ("$O(T^2 d)$", ["T", "d"]),
        ("$O(\\log T)$", ["T"]),
        ("$\\text{cost of } T$", ["T"]),
        ("$\\sum_{j} \\alpha_{ij} v_j$", ["j", "\\alpha_{ij}", "v_{j}"]),
        ("$\\hat{p}$ and $\\hat p$", ["\\hat{p}", "\\hat{p}"]),
        ("$$T\\,(d_h^2)$$ {#eq:recurrence}", ["T", "d_{h}"]),
        ("`$x$` in code, 50% off, $y$", ["y"]),
        ("```\n$x$\n```\n$y$", ["y"]),
        ("a \\$5 bill and $z$", ["z"]),
    ],
)
def test_symbols(markdown: str, expected: list[str]) -> None:
    assert keys(markdown) == expected


def test_offsets_point_at_the_symbol() -> None:
    text = "cost $T\\,(d_h^2)$"
    assert [text[use.offset] for use in symbols_in_markdown(text)] == ["T", "d"]


@pytest.mark.parametrize(
    ("symbol", "key"),
    [
        ("d_k", "d_{k}"),
        ("d_{k}", "d_{k}"),
        ("W_hh", "W_{hh}"),
        ("W_{ hh }", "W_{hh}"),
        ("\\alpha_{ij}", "\\alpha_{ij}"),
        ("H(p)", "H"),
        ("\\langle u, v \\rangle", None),
        ("\\tanh", None),
    ],
)
def test_declared_key(symbol: str, key: str | None) -> None:
    assert declared_key(symbol) == key


def test_notations_with_arguments_are_told_apart() -> None:
    assert notation_key("H(p)") != notation_key("H(p, \\hat{p})")
    assert notation_key("W_hh") == notation_key("W_{hh}")


def test_index_subscripts_depend_on_declared_letters() -> None:
    declared = {"t", "i", "j", "T"}
    assert is_index("t-1", declared) and is_index("ij", declared) and is_index("1", declared)
    assert not is_index("hh", declared) and not is_index("k", declared)


NOTATION_SYMBOLS = [
    "T",
    "d_k",
    "d_{k}",
    "W_{hh}",
    "\\alpha_{ij}",
    "\\mathbf{Q}",
    "\\mathbf Q",
    "\\mathbf{W}_{hh}",
    "\\mathbf{W_{hh}}",
    "\\hat{\\mathbf{y}}",
    "\\boldsymbol{\\alpha}",
    "\\bm{x}",
    "\\mathcal{L}",
    "\\mathbb{R}",
    "\\hat p",
    "\\tilde{h}_t",
    "d_{\\text{model}}",
    "\\lambda",
    "\\ell",
    "\\lambda_{\\max}",
]


@pytest.mark.parametrize("symbol", NOTATION_SYMBOLS)
def test_notation_and_reader_agree_on_names(symbol: str) -> None:
    """A notation entry `\\mathbf{Q}` names the symbol the reader reads in `\\mathbf{Q} K^\\top`."""
    from coursekit.rules._assume import symbol_name

    key = declared_key(symbol)
    assert key is not None
    assert formula_name(key) == symbol_name(symbol) is not None


def test_styles_are_distinct_names() -> None:
    names = {formula_name(declared_key(s) or "") for s in ["Q", "\\mathbf{Q}", "\\mathcal{Q}"]}
    assert names == {"Q", "mathbf_Q", "mathcal_Q"}


@pytest.mark.parametrize("key", ["h_{t-1}", "p_{i,2j}", "x_{2i}", "\\langle"])
def test_index_subscripts_have_no_formula_name(key: str) -> None:
    assert formula_name(key) is None
