"""A tree written back as one canonical line, for tests, the corpus and messages.

``2Td^2`` is ``2*T*d^2``, ``h_{t-1}`` is ``Indexed(h, t - 1)``; parentheses appear only where
precedence needs them.  Only attribute names are read (no imports), so the corpus benchmark can
print the trees of an older reader with the same function.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}


def show(node: Any) -> str:
    """One expression tree as text."""
    return _show(node, 0)


def _wrap(text: str, prec: int, need: int) -> str:
    return f"({text})" if prec < need else text


def _show(node: Any, need: int) -> str:
    kind = type(node).__name__
    if kind == "Num":
        value = Fraction(node.value)
        if value.denominator == 1:
            return str(value.numerator)
        return _wrap(f"{value.numerator}/{value.denominator}", 2, need)
    if kind == "Name":
        return str(node.id)
    if kind == "Neg":
        return _wrap("-" + _show(node.operand, 3), 1, need)
    if kind == "Call":
        return f"{node.func}({', '.join(_show(a, 0) for a in node.args)})"
    op = node.op
    prec = _PREC[op]
    if op == "**":
        return _wrap(f"{_show(node.left, 5)}^{_show(node.right, 5)}", prec, need)
    if op == "/":
        return _wrap(f"{_show(node.left, 3)}/{_show(node.right, 3)}", prec, need)
    right_need = prec + 1 if op == "-" else prec
    sep = "*" if op == "*" else f" {op} "
    return _wrap(f"{_show(node.left, prec)}{sep}{_show(node.right, right_need)}", prec, need)


def show_sides(sides: list[Any]) -> str:
    """A chain of relations: ``h_t = tanh(...)``, ``x \\in R^(d, n)``, labels in brackets."""
    out: list[str] = []
    for side in sides:
        relation = getattr(side, "relation", "=")
        if out:
            out.append(relation or "=")
        if getattr(side, "space", None) is not None:
            dims = ", ".join(show(d) for d in side.shape or ())
            out.append(f"{side.space}^({dims})" if dims else str(side.space))
        elif side.node is None:
            out.append(f"[{side.source}]")
        else:
            out.append(show(side.node))
    return " ".join(out)
