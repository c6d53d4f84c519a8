r"""The LaTeX a reader sees, parsed into the same tree as the declared formulas.

Route chosen: a small hand-written tokenizer and a recursive-descent parser, producing
:mod:`coursekit.verify.tree` nodes.  Why not the alternatives:

* ``sympy.parsing.latex.parse_latex`` (ANTLR or lark) and latex2sympy: each is narrower on real
  textbook maths, misreads ``\tanh``, ``d`` or subscripts, evaluates eagerly, or truncates
  ``26{,}214{,}400``; the ANTLR route also needs an exact runtime and ~370 ms to import;
* pylatexenc's walker would tokenise macros and groups for us, but it knows nothing of maths:
  precedence, implicit products, scripts binding to the previous atom and ``\left( \right)``
  would still need a parser over its node list, with offsets mapped back.

The rule over everything: **read it right or refuse it, naming the construct** -- never guess.
What is read (anything else is a :class:`~coursekit.verify.expr.FormulaError` with an offset):

* numbers ``512``, ``1.95``, ``26{,}214{,}400``; single letters, each its own symbol (``Td`` is
  ``T*d``; three letters run together, ``pos``, or two capitals before ``_``/``(``, ``PE_i``, are
  refused: a name in italics, not a product); Greek ``\alpha`` -> ``alpha`` (``\lambda`` ->
  ``lamda``; ``\pi`` is the constant);
* styles and accents are distinct names (the convention in ``latex_macros.styled_name``, which
  ``latex_names.formula_name`` shares): ``\mathbf{Q}``/``\mathbf Q`` -> ``mathbf_Q``,
  ``\boldsymbol\alpha`` -> ``boldsymbol_alpha``, ``\mathcal{L}`` -> ``mathcal_L``,
  ``\hat y_t`` -> ``hat_y_t``; upright ``\mathrm{grid}``, ``\text{..}``, ``\operatorname{..}``
  are the plain name ``grid`` (so a declared formula can be referred to by name);
* subscripts that name: ``d_h`` -> ``d_h``, ``W_{hh}`` -> ``W_hh``, ``d_{\text{model}}`` ->
  ``d_model``; subscripts that index: ``h_{t-1}`` -> ``Indexed(h, t - 1)``, ``p_{i,2j}``;
* superscripts: powers ``x^2``, ``10000^{2i/d}`` (``e^{x}`` is ``exp(x)``); ``^\top``,
  ``^{\mathsf T}`` (and ``^T`` on a bold symbol) -> ``transpose(x)``; labels ``H^{(0)}``,
  ``W^Q``, ``W^{\text{enc}}`` -> ``Label(H, 0)``; ordinals ``i^{\text{th}}`` -> ``Ordinal(i)``;
  ``K^T`` on a plain letter is refused (transpose or power of T?);
* ``+ - * /``, ``\cdot``, ``\times``, ``\div``, ``\odot`` (``Hadamard``), ``\frac``, ``\sqrt``,
  ``\frac{\partial L}{\partial h_t}`` (``Derivative``), ``\nabla_\theta L`` (``Gradient``),
  ``\sum_{i=1}^{n}``/``\prod`` (``Sum(body, i, 1, n)``; the body runs to the next ``+``/``-``),
  norms ``\|x\|_2``, ``\lVert x\rVert``, ``|x|``, floors and ceilings; the functions ``\exp``,
  ``\log``, ``\log_b``, ``\ln``, ``\sin``, ``\cos``, ``\tan``, ``\tanh``, ``\max``, ``\min``;
* applications: ``\mathrm{softmax}(x)``, a declared function (``functions=``), several arguments
  ``\alpha(\mathbf q, \mathbf k)``, conventional function letters (``f g p q F G``, ``\sigma``,
  ``\phi``, ``\psi``, any ``\mathcal``) -> ``Call(name, args)``; ``O(..)``, ``\mathcal{O}(..)``,
  ``\Theta(..)``, ``\Omega(..)`` -> ``Call("O", ..)``...; ``T(d + 1)`` (a capital before a sum)
  and ``n(n-1)`` are products; other ``x(y)`` are refused as ambiguous;
* refused as ambiguous, naming the construct: ``\sin \omega t`` (a function without parentheses
  before more factors), ``\Delta W``, ``\delta x``, ``\mathrm{d}t`` (a change or a product?),
  ``1e-4``, ``262\,144`` (two numbers side by side), ``x[t]``, ``\mathbb{R}^{d}`` outside
  ``\in``; ``x^{<t>}``, ``W^{(hh)}``, ``y^{LS}`` are labels;
* grouping ``( ) [ ] { } \{ \}``, ``\left( ... \right)``, sizes and spacing; sentence punctuation
  at the very end; ``aligned``/``align*``/``split`` with ``&`` and ``\\`` (every line continues
  one chain);
* a chain of relations ``=``, ``<``, ``>``, ``\le``, ``\ge``, ``\approx``, ``\propto``,
  ``\neq``, ``\ll``, ``\gg`` (``:=`` is ``=``), and ``x \in \mathbb{R}^{a \times b}``: see
  :class:`Side`. A side that is only a label (``\text{..}``, ``\mathrm{..}_{..}``) carries no
  expression.
"""

from __future__ import annotations

from collections.abc import Iterable

from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits, check_constants
from coursekit.verify.latex.parser import Side, _Parser
from coursekit.verify.latex.tokens import GREEK, tokenize
from coursekit.verify.tree import Node, node_count


def parse_latex_sides(
    text: str, *, limits: Limits = DEFAULT_LIMITS, functions: Iterable[str] = ()
) -> list[Side]:
    """Parse a chain of relations into its sides (labels have ``node=None``).

    ``functions`` are names declared as functions: ``f(x)`` with ``f`` among them is an
    application, never a product.
    """
    if len(text) > limits.max_length:
        raise FormulaError(f"LaTeX longer than {limits.max_length} characters", 0, text)
    if not text.strip():
        raise FormulaError("empty equation", 0, text)
    parser = _Parser(text, limits)
    parser.functions = frozenset(functions)
    if len(parser.toks) > limits.max_nodes * 4:
        raise FormulaError("equation too long", 0, text)
    try:
        sides = parser.sides()
    except RecursionError:
        raise FormulaError("equation too deeply nested", 0, text) from None
    total = sum(node_count(s.node) for s in sides if s.node is not None)
    total += sum(node_count(d) for s in sides for d in s.shape or ())
    if total > limits.max_nodes * 4:
        raise FormulaError("equation has too many terms", 0, text)
    for side in sides:
        for node in (side.node, *(side.shape or ())):
            if node is not None:
                check_constants(node, limits=limits, text=text)
    return sides


def parse_latex(
    text: str, *, limits: Limits = DEFAULT_LIMITS, functions: Iterable[str] = ()
) -> Node:
    """Parse LaTeX that shows exactly one expression (labels allowed around ``=``)."""
    all_sides = parse_latex_sides(text, limits=limits, functions=functions)
    for side in all_sides:
        if side.relation not in {"", "="}:
            raise FormulaError(
                f"expected one expression, found a {side.relation}", side.offset, text
            )
    sides = [s for s in all_sides if s.node is not None]
    if len(sides) != 1:
        raise FormulaError(f"expected one expression, found {len(sides)}", 0, text)
    node = sides[0].node
    assert node is not None
    return node


__all__ = ["GREEK", "Side", "parse_latex", "parse_latex_sides", "tokenize"]
