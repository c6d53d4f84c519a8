"""The LaTeX macro vocabulary the symbol reader classifies maths by (a table, one idea).

Which macros are Greek letters, which turn their argument into one named symbol (fonts,
accents), whose argument is prose rather than maths, which dots may sit in an index, and which
macros open a sized delimiter. `coursekit.latex_symbols` says what each class means for a symbol.
"""

from __future__ import annotations

GREEK = frozenset(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "varepsilon",
        "zeta",
        "eta",
        "theta",
        "vartheta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "omicron",
        "pi",
        "varpi",
        "rho",
        "varrho",
        "sigma",
        "varsigma",
        "tau",
        "upsilon",
        "phi",
        "varphi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Lambda",
        "Xi",
        "Pi",
        "Sigma",
        "Upsilon",
        "Phi",
        "Psi",
        "Omega",
        "ell",
    ]
)
# A font macro turns its argument into one named symbol: \mathrm{softmax}, \mathbb{R}.
FONTS = frozenset(
    [
        "mathrm",
        "mathbf",
        "mathbb",
        "mathcal",
        "mathit",
        "mathsf",
        "mathtt",
        "mathfrak",
        "mathscr",
        "operatorname",
        "boldsymbol",
        "bm",
    ]
)
ACCENTS = frozenset(
    [
        "hat",
        "bar",
        "tilde",
        "vec",
        "dot",
        "ddot",
        "widehat",
        "widetilde",
        "overline",
        "check",
        "breve",
        "acute",
        "grave",
    ]
)
# Their argument is prose or a label, not maths.
SKIP_ARGUMENT = frozenset(
    [
        "text",
        "textrm",
        "textit",
        "textbf",
        "textsf",
        "texttt",
        "mbox",
        "label",
        "tag",
        "ref",
        "eqref",
        "href",
        "url",
    ]
)
INDEX_MACROS = frozenset({"dots", "ldots", "cdots"})
OPEN_DELIMITERS = frozenset({"left", "bigl", "Bigl"})


# How a styled or accented symbol is named in formulas (the parser and `latex_names` agree):
# the style's name, an underscore, then the plain name: `\mathbf{Q}` -> `mathbf_Q`,
# `\boldsymbol{\alpha}` -> `boldsymbol_alpha`, `\hat{y}_t` -> `hat_y_t`. Spellings of one
# style share a prefix (`\bm` is `\boldsymbol`, `\widehat` is `\hat`); upright
# `\mathrm`, `\mathit`, `\mathsf` and `\operatorname` add nothing (`\mathrm{softmax}` is `softmax`).
STYLE_PREFIX: dict[str, str] = {
    "mathbf": "mathbf",
    "textbf": "mathbf",
    "boldsymbol": "boldsymbol",
    "bm": "boldsymbol",
    "mathcal": "mathcal",
    "mathbb": "mathbb",
    "mathfrak": "mathfrak",
    "mathscr": "mathscr",
    "mathtt": "mathtt",
}
ACCENT_PREFIX: dict[str, str] = {
    "hat": "hat",
    "widehat": "hat",
    "tilde": "tilde",
    "widetilde": "tilde",
    "bar": "bar",
    "overline": "bar",
    "vec": "vec",
    "dot": "dot",
    "ddot": "ddot",
    "check": "check",
    "breve": "breve",
}


def styled_name(prefix: str, name: str) -> str:
    """The formula name of a styled or accented symbol: (`mathbf`, `W_hh`) -> `mathbf_W_hh`."""
    return f"{prefix}_{name}"
