"""A tiny expression tree shared by the formula parser and the LaTeX parser.

Both front ends (:mod:`coursekit.verify.expr` for the Python-syntax formulas an author declares,
:mod:`coursekit.verify.latex` for the LaTeX a reader sees) produce these nodes; only
:func:`coursekit.verify.symbolic.to_sympy` turns them into sympy objects.  Keeping a sympy-free
intermediate form means syntax checking, dependency analysis between formulas and cycle detection
all run without importing sympy, and that the two front ends cannot disagree on what a name or an
operator means.

Every node records ``offset``: the character offset, in the text it was parsed from, of the start
of the construct, so a caller can point at ``file:line:col``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from coursekit.records import record

BinaryOp = Literal["+", "-", "*", "/", "**"]


@record(frozen=True)
class Num:
    """An exact number (integers and decimals are kept exact as fractions)."""

    value: Fraction
    offset: int


@record(frozen=True)
class Name:
    """A symbol, a declared formula or a named constant (``pi``)."""

    id: str
    offset: int


@record(frozen=True)
class Neg:
    operand: Node
    offset: int


@record(frozen=True)
class BinOp:
    op: BinaryOp
    left: Node
    right: Node
    offset: int


@record(frozen=True)
class Call:
    """A call to one of the whitelisted functions in :data:`FUNCTIONS`."""

    func: str
    args: tuple[Node, ...]
    offset: int


Node = Num | Name | Neg | BinOp | Call

#: Whitelisted functions: name -> (minimum, maximum) number of arguments.
FUNCTIONS: dict[str, tuple[int, int]] = {
    "sqrt": (1, 1),
    "exp": (1, 1),
    "log": (1, 2),
    "ln": (1, 1),
    "sin": (1, 1),
    "cos": (1, 1),
    "tan": (1, 1),
    "tanh": (1, 1),
    "sigmoid": (1, 1),
    "Abs": (1, 1),
    "floor": (1, 1),
    "ceiling": (1, 1),
    "Max": (2, 16),
    "Min": (2, 16),
    # Matrices (coursekit.verify.shapes): `K.T` in a formula and `K^\top` in LaTeX are one node,
    # `Call("transpose", (K,))`; softmax is opaque to sympy and applied row by row when the
    # notation says so.
    "transpose": (1, 1),
    "softmax": (1, 1),
    "Hadamard": (2, 2),  # the entry-by-entry product A ⊙ B of two matrices of one shape
}

#: Names that denote constants rather than symbols.
CONSTANTS: frozenset[str] = frozenset({"pi"})


def free_names(node: Node) -> set[str]:
    """Every :class:`Name` in ``node`` (symbols, formulas and constants alike)."""
    out: set[str] = set()
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            out.add(n.id)
        elif isinstance(n, Neg):
            stack.append(n.operand)
        elif isinstance(n, BinOp):
            stack.extend((n.left, n.right))
        elif isinstance(n, Call):
            stack.extend(n.args)
    return out


def first_offset(node: Node, name: str) -> int | None:
    """Offset of the first occurrence of ``name`` in ``node`` (for pointing at a use)."""
    best: int | None = None
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Name):
            if n.id == name and (best is None or n.offset < best):
                best = n.offset
        elif isinstance(n, Neg):
            stack.append(n.operand)
        elif isinstance(n, BinOp):
            stack.extend((n.left, n.right))
        elif isinstance(n, Call):
            stack.extend(n.args)
    return best


def node_count(node: Node) -> int:
    count = 0
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        count += 1
        if isinstance(n, Neg):
            stack.append(n.operand)
        elif isinstance(n, BinOp):
            stack.extend((n.left, n.right))
        elif isinstance(n, Call):
            stack.extend(n.args)
    return count


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}


def formula_text(node: Node, outer: int = 0) -> str:
    """The tree in the declared formulas' Python syntax (``softmax(Q*K.T/sqrt(d_k))*V``).

    Parenthesised only where precedence needs it, so it reads as an author writes it in
    messages and `parse_formula` reads it back to the same tree.
    """
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Num):
        value = node.value
        if value.denominator == 1:
            return str(value.numerator)
        text, prec = f"{value.numerator}/{value.denominator}", 2
    elif isinstance(node, Neg):
        # a negation inside a product, power or on the right of a sum keeps its parentheses
        text, prec = "-" + formula_text(node.operand, 3), 3 if outer < 2 else 0
    elif isinstance(node, Call):
        if node.func == "transpose":
            return formula_text(node.args[0], 5) + ".T"
        return f"{node.func}({', '.join(formula_text(a) for a in node.args)})"
    else:
        prec = _PRECEDENCE[node.op]
        left = prec + (1 if node.op == "**" else 0)
        right = prec + (0 if node.op == "**" else 1)
        text = f"{formula_text(node.left, left)}{node.op}{formula_text(node.right, right)}"
    return f"({text})" if prec < outer else text
