"""Exact arithmetic and power products over the sympy-free tree, for what the prose shows.

`constant_value` evaluates a tree with no symbols in exact fractions (`2\\cdot 50\\cdot 512^2`
is 26,214,400, never a float), refusing what it cannot hold. `power_product` reads a tree as
`c * x1**a1 * ... * xk**ak`, the shape of nearly every order of growth a text writes
(`T^2 d`, `T d^2 / h`, `1`), so two orders compare by their exponents without sympy.
Neither imports sympy: both run inside a structural check.
"""

from __future__ import annotations

from fractions import Fraction

from coursekit.verify.expr import DEFAULT_LIMITS, Limits, fold_constant
from coursekit.verify.tree import BinOp, Call, Name, Neg, Node, Num

Exponents = dict[str, Fraction]


def constant_value(node: Node, limits: Limits = DEFAULT_LIMITS) -> Fraction | None:
    """The exact value of a tree without symbols, or None (a symbol, a function, too large)."""
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Neg):
        inner = constant_value(node.operand, limits)
        return None if inner is None else -inner
    if isinstance(node, BinOp):
        left = constant_value(node.left, limits)
        right = constant_value(node.right, limits)
        if left is None or right is None:
            return None
        try:
            return fold_constant(node.op, left, right, limits)
        except Exception:  # too large to hold, or a division by zero: not a shown number
            return None
    return None  # a Name or a Call


def power_product(node: Node) -> Exponents | None:
    """`{symbol: exponent}` of a product of powers of symbols (constants dropped), or None."""
    if isinstance(node, Num):
        return {} if node.value != 0 else None
    if isinstance(node, Name):
        return {node.id: Fraction(1)}
    if isinstance(node, Neg):
        return power_product(node.operand)
    if isinstance(node, Call) and node.func == "sqrt" and len(node.args) == 1:
        inner = power_product(node.args[0])
        return None if inner is None else {k: v / 2 for k, v in inner.items()}
    if not isinstance(node, BinOp):
        return None
    if node.op == "**":
        base = power_product(node.left)
        exponent = constant_value(node.right)
        if base is None or exponent is None:
            return None
        return {k: v * exponent for k, v in base.items()}
    if node.op in ("*", "/"):
        left, right = power_product(node.left), power_product(node.right)
        if left is None or right is None:
            return None
        sign = 1 if node.op == "*" else -1
        out = dict(left)
        for key, value in right.items():
            out[key] = out.get(key, Fraction(0)) + sign * value
        return {k: v for k, v in out.items() if v != 0}
    return None  # a sum: compared by its terms elsewhere


def shown_product(exponents: Exponents) -> str:
    """`T^2 d` for `{T: 2, d: 1}`; `1` for the empty product."""
    if not exponents:
        return "1"
    parts = []
    for name in sorted(exponents):
        power = exponents[name]
        parts.append(name if power == 1 else f"{name}^{power}")
    return " ".join(parts)
