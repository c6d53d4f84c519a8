"""Counting from shapes: the multiply-adds and the entries of a shaped expression.

`cost: Q*K.T` on a value or order claim becomes ``T**2*d_k`` here, so a chapter's scalar costs
are derived from its matrices instead of typed in. The shapes come from
:mod:`coursekit.verify.shapes`; nothing is built entry by entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from coursekit.verify.shapes import Axis, ShapeError, Shapes, dependency_order, infer_text
from coursekit.verify.tree import BinOp, Call, Name, Neg, Node, Num, free_names


def _mul(*factors: Node) -> Node:
    out: Node | None = None
    for f in factors:
        if isinstance(f, Num) and f.value == 1:
            continue
        out = f if out is None else BinOp("*", out, f, 0)
    return out if out is not None else Num(Fraction(1), 0)


def _size(axis: Axis) -> Node:
    return Num(Fraction(int(axis.size)), 0) if axis.size.isdigit() else Name(axis.size, 0)


def memory(node: Node, shapes: Shapes) -> Node:
    """The number of entries of ``node``'s value (1 for a scalar), as a formula tree."""
    shape = infer_text(node, shapes)
    return _mul(*(_size(a) for a in shape.axes))


#: More products than this in one count is refused (a formula used twice counts twice, so a
#: chain of formulas each using the previous one twice would double at every link).
MAX_PRODUCTS = 10_000


def cost(node: Node, shapes: Shapes) -> Node:
    """Multiply-adds of every matrix product in ``node`` (``Q*K.T``: ``T*d_k*T``), as a tree."""
    infer_text(node, shapes)  # a count of products that do not fit would count nothing real
    reachable = _reachable(node, shapes.formulas)
    own: dict[str, list[Node]] = {}
    for name in dependency_order({n: shapes.formulas[n] for n in reachable}):
        own[name] = _products(shapes.formulas[name], shapes, own)
    terms = _products(node, shapes, own)
    if not terms:
        return Num(Fraction(0), 0)
    total = terms[0]
    for t in terms[1:]:
        total = BinOp("+", total, t, 0)
    return total


def _reachable(node: Node, formulas: Mapping[str, Node]) -> set[str]:
    found: set[str] = set()
    stack = [n for n in free_names(node) if n in formulas]
    while stack:
        name = stack.pop()
        if name not in found:
            found.add(name)
            stack.extend(n for n in free_names(formulas[name]) if n in formulas)
    return found


def _products(tree: Node, shapes: Shapes, own: Mapping[str, list[Node]]) -> list[Node]:
    """The multiply-adds of each product in ``tree``, a used formula's counted as often as used."""
    terms: list[Node] = []
    stack: list[tuple[Node, bool]] = [(tree, False)]
    while stack:  # post-order, so inner products are listed first
        n, done = stack.pop()
        if done:
            assert isinstance(n, BinOp)
            left, right = infer_text(n.left, shapes), infer_text(n.right, shapes)
            if not left.scalar and not right.scalar:
                m, inner = left.axes
                terms.append(_mul(_size(m), _size(inner), _size(right.axes[1])))
        elif isinstance(n, Name):
            terms.extend(own.get(n.id, ()))
        elif isinstance(n, Neg):
            stack.append((n.operand, False))
        elif isinstance(n, Call):
            stack.extend((a, False) for a in reversed(n.args))
        elif isinstance(n, BinOp):
            if n.op == "*":
                stack.append((n, True))
            stack.extend(((n.right, False), (n.left, False)))
        if len(terms) > MAX_PRODUCTS:
            raise ShapeError(f"more than {MAX_PRODUCTS} matrix products to count")
    return terms


__all__ = ["MAX_PRODUCTS", "cost", "memory"]
