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
