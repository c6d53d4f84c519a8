r"""The LaTeX a reader sees, parsed into the same tree as the declared formulas.

Route chosen: a small hand-written tokenizer and a recursive-descent parser, producing
:mod:`coursekit.verify.tree` nodes.  Why not the alternatives:

* ``sympy.parsing.latex.parse_latex`` needs an exact ANTLR runtime (or the lark backend, which
  rejects implicit products such as ``2 T^2 d``), names ``W_{hh}`` ``W_{h*h}`` with no assumptions,
  and costs ~370 ms to import;
* pylatexenc's walker would tokenise macros and groups for us, but it knows nothing of maths:
  operator precedence, implicit products, sub/superscripts binding to the previous atom and
  ``\left( ... \right)`` would still need a parser over its flat node list, and offsets would have
  to be mapped back.  A tokenizer for the maths subset is ~80 lines with exact offsets and a closed
  whitelist (an unknown macro is an error, not something to guess at).

The subset (anything else is a :class:`~coursekit.verify.expr.FormulaError` with an offset):

* numbers ``512``, ``1.95``, ``26{,}214{,}400`` (digits must be contiguous; ``{,}`` groups);
* single letters, each its own symbol: ``Td`` is ``T*d``; Greek macros ``\alpha`` -> ``alpha``
  (``\lambda`` -> ``lamda``, sympy's spelling, since ``lambda`` is a Python keyword; ``\pi`` is
  the constant);
* subscripts name symbols: ``d_h`` -> ``d_h``, ``W_{hh}`` -> ``W_hh``, ``\alpha_{ij}`` ->
  ``alpha_ij``, ``d_{\text{model}}`` -> ``d_model``;
* ``\mathrm{grid}``, ``\text{grid}``, ``\operatorname{grid}`` with an identifier inside are the
  name ``grid`` (so a declared formula can be referred to by name);
* powers ``x^2``, ``x^{T+1}`` (a bare ``^23`` is ``^2`` followed by ``3``, as in TeX);
* ``+ - * /``, ``\cdot``, ``\times``, ``\div``, ``\frac{a}{b}`` (also ``\dfrac``, ``\tfrac``,
  ``\frac12``), ``\sqrt{x}``, ``\sqrt[n]{x}``, ``\exp``, ``\log``, ``\log_b``, ``\ln``, ``\sin``,
  ``\cos``, ``\tan``, ``\tanh``, ``\max``, ``\min``;
* grouping with ``( )``, ``[ ]``, ``{ }``, ``\{ \}``, ``\left( ... \right)`` and ``\bigl``-style
  sizes; spacing ``\, \; \: \! \quad \qquad``, ``\displaystyle`` and ``&`` are ignored;
* implicit products bind tighter than an explicit ``/``, ``\cdot`` or ``\times``:
  ``T/2d`` is ``T/(2*d)``, as a reader reads it;
* sentence punctuation (``.`` ``,`` ``;``) at the very end is ignored;
* an ``=`` chain is split at top level into sides; a side that is only a label --
  ``\text{..}``, ``\mathrm{..}`` (optionally subscripted) -- carries no expression.
"""

from __future__ import annotations

from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits, check_constants
from coursekit.verify.latex.parser import Side, _Parser
from coursekit.verify.latex.tokens import GREEK, tokenize
from coursekit.verify.tree import Node, node_count


def parse_latex_sides(text: str, *, limits: Limits = DEFAULT_LIMITS) -> list[Side]:
    """Parse an ``=`` chain into its sides (labels have ``node=None``)."""
    if len(text) > limits.max_length:
        raise FormulaError(f"LaTeX longer than {limits.max_length} characters", 0, text)
    if not text.strip():
        raise FormulaError("empty equation", 0, text)
    parser = _Parser(text, limits)
    if len(parser.toks) > limits.max_nodes * 4:
        raise FormulaError("equation too long", 0, text)
    try:
        sides = parser.sides()
    except RecursionError:
        raise FormulaError("equation too deeply nested", 0, text) from None
    total = sum(node_count(s.node) for s in sides if s.node is not None)
    if total > limits.max_nodes * 4:
        raise FormulaError("equation has too many terms", 0, text)
    for side in sides:
        if side.node is not None:
            check_constants(side.node, limits=limits, text=text)
    return sides


def parse_latex(text: str, *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Parse LaTeX that shows exactly one expression (labels allowed around ``=``)."""
    sides = [s for s in parse_latex_sides(text, limits=limits) if s.node is not None]
    if len(sides) != 1:
        raise FormulaError(f"expected one expression, found {len(sides)}", 0, text)
    node = sides[0].node
    assert node is not None
    return node


__all__ = ["GREEK", "Side", "parse_latex", "parse_latex_sides", "tokenize"]
