"""How a formula's shape follows from its parts: the rules of inference, in reading order.

* a number, or a symbol without a declared shape, is a scalar; ``[n]`` is a column ``n×1``, and
  a ``1×1`` result (``q.T*k``) is a scalar again;
* ``A*B`` of two matrices is a matrix product: the columns of ``A`` must match the rows of ``B``
  (in size, and in what they index when both say); with a scalar on either side it is scaling;
* ``+``, ``-`` and ``Hadamard(A, B)`` (``A ⊙ B``, entry by entry) need equal shapes; ``/`` divides by a scalar only; ``**`` raises a scalar, or a
  square matrix to a positive whole power;
* ``transpose`` (``K.T``) swaps the axes; a row-wise function keeps the shape and normalises each
  row over the columns, so a product that sums such a matrix over another axis (its rows index
  keys, the normalised axis queries) is the softmax over the wrong axis;
* every other function (``sqrt``, ``exp``, ...) takes scalars only.

What a name's shape is comes from a :class:`ShapeScope` (in practice
:class:`coursekit.verify.shapes.Shapes`), so this module never looks a formula up itself.
"""

from __future__ import annotations

import re
from typing import Protocol

from coursekit.verify.shape_model import SCALAR, Axis, OpaqueShape, Shape, ShapeError, squeeze
from coursekit.verify.tree import FUNCTIONS, BinOp, Call, Name, Neg, Node, Num, formula_text

#: Functions of numbers: a matrix argument is a shape error.
NUMBER_FUNCTIONS = frozenset(FUNCTIONS) - {"transpose", "softmax", "Hadamard"}


class ShapeScope(Protocol):
    """Where inference finds the shape of a name and which functions are row-wise."""

    @property
    def rowwise(self) -> frozenset[str]: ...

    def of_name(self, name: str) -> Shape: ...


def infer(node: Node, shapes: ShapeScope) -> Shape:
    """The shape of ``node``, or :class:`ShapeError` naming the shapes that do not fit."""
    if isinstance(node, Num):
        return SCALAR
    if isinstance(node, Name):
        return shapes.of_name(node.id)
    if isinstance(node, Neg):
        return infer(node.operand, shapes)
    if isinstance(node, Call):
        return _call(node, shapes)
    left, right = infer(node.left, shapes), infer(node.right, shapes)
    if node.op == "*":
        return _product(node, left, right)
    if node.op in ("+", "-"):
        return _elementwise(node, node.left, node.right, left, right)
    if node.op == "/":
        if not right.scalar:
            raise ShapeError(
                f"{formula_text(node)} divides by {formula_text(node.right)}, which is {right.text()}: "
                "only a scalar divides (multiply by an inverse instead)",
                node.right.offset,
            )
        return left
    return _power(node, left, right)


def _call(node: Call, shapes: ShapeScope) -> Shape:
    args = [infer(a, shapes) for a in node.args]
    if node.func == "transpose":
        (a,) = args
        if a.scalar:
            return a
        flip = None if a.normalised is None else 1 - a.normalised
        return Shape((a.axes[1], a.axes[0]), flip, a.by)
    if node.func not in FUNCTIONS and node.func not in shapes.rowwise:
        raise OpaqueShape(node.func)
    if node.func == "Hadamard":
        return _elementwise(node, node.args[0], node.args[1], args[0], args[1])
    if node.func in shapes.rowwise:
        (a,) = args
        if a.scalar:
            raise ShapeError(
                f"{node.func} is applied row by row, but {formula_text(node.args[0])} is a scalar, "
                "not a matrix",
                node.offset,
            )
        return Shape(a.axes, 1, node.func)
    for arg, shape in zip(node.args, args, strict=True):
        if not shape.scalar:
            hint = (
                f" (if it is applied row by row, declare `rowwise: true` for {node.func} in the "
                "notation)"
                if node.func not in NUMBER_FUNCTIONS
                else ""
            )
            raise ShapeError(
                f"{node.func} takes a scalar, but {formula_text(arg)} is {shape.text()}{hint}",
                node.offset,
            )
    return SCALAR


def _elementwise(node: Node, a: Node, b: Node, left: Shape, right: Shape) -> Shape:
    if left.scalar and right.scalar:
        return SCALAR
    if [x.size for x in left.axes] != [x.size for x in right.axes]:
        how = "multiplies" if isinstance(node, Call) else "adds"
        raise ShapeError(
            f"{formula_text(node)} {how} entry by entry, but {formula_text(a)} is {left.text()} and {formula_text(b)} "
            f"is {right.text()}: the shapes must be equal",
            node.offset,
        )
    axes = tuple(
        x if x.role == y.role else Axis(x.size) for x, y in zip(left.axes, right.axes, strict=True)
    )
    return Shape(axes)


def _power(node: BinOp, left: Shape, right: Shape) -> Shape:
    if not right.scalar:
        raise ShapeError(
            f"the exponent {formula_text(node.right)} of {formula_text(node)} is {right.text()}, not a scalar",
            node.right.offset,
        )
    if left.scalar:
        return left
    exp = node.right
    if not (isinstance(exp, Num) and exp.value.denominator == 1 and exp.value >= 1):
        raise ShapeError(
            f"{formula_text(node)} raises the {left.text()} matrix {formula_text(node.left)} to a power that is "
            "not a positive whole number",
            node.offset,
        )
    if left.axes[0].size != left.axes[1].size:
        raise ShapeError(
            f"{formula_text(node)} multiplies {formula_text(node.left)} by itself, but it is {left.text()}, "
            "not square",
            node.offset,
        )
    return Shape(left.axes)


def _product(node: BinOp, left: Shape, right: Shape) -> Shape:
    if left.scalar or right.scalar:
        kept = right if left.scalar else left
        return kept  # scaling keeps the shape, and what a row-wise function normalised
    a, b = formula_text(node.left), formula_text(node.right)
    inner_l, inner_r = left.axes[1], right.axes[0]
    if inner_l.size != inner_r.size:
        raise ShapeError(_conform_message(a, b, left, right), node.offset)
    _check_normalised(node, a, b, left, right)
    if inner_l.role and inner_r.role and inner_l.role != inner_r.role:
        if left.normalised == 1:
            message = (
                f"{a} normalises each row over {inner_l.role}, but the rows of {b} are "
                f"{inner_r.role}: the {left.by} runs over the wrong axis"
            )
        else:
            message = (
                f"{a}*{b} sums the columns of {a} ({inner_l.role}) against the rows of {b} "
                f"({inner_r.role}): they index different things"
            )
        raise ShapeError(message, node.offset)
    return squeeze(Shape((left.axes[0], right.axes[1])))


def _conform_message(a: str, b: str, left: Shape, right: Shape) -> str:
    lr, lc = left.axes[0].size, left.axes[1].size
    rr, rc = right.axes[0].size, right.axes[1].size
    if lc == rc:
        fix = f"; {a}·{b} needs {b} transposed ({_t(a)}*{_flip(b)})"
    elif lr == rr:
        fix = f"; {a}·{b} needs {a} transposed ({_flip(a)}*{_t(b)})"
    else:
        fix = ""
    return (
        f"{a} is {left.text()}, {b} is {right.text()}: the columns of {a} ({lc}) do not match "
        f"the rows of {b} ({rr}){fix}"
    )


def _flip(text: str) -> str:
    """The transpose of an operand as written: ``K`` -> ``K.T``, ``K.T`` -> ``K``."""
    if text.endswith(".T") and re.fullmatch(r"\w+", text[:-2]):
        return text[:-2]
    return _t(text) + ".T"


def _t(text: str) -> str:
    return text if re.fullmatch(r"[\w.]+|\w+\(.*\)", text) else f"({text})"


def _check_normalised(node: BinOp, a: str, b: str, left: Shape, right: Shape) -> None:
    """A row-wise normalised factor must be summed over the axis it was normalised over."""
    for factor, shape, summed in ((a, left, 1), (b, right, 0)):
        if shape.normalised is None or shape.normalised == summed:
            continue
        norm, other = shape.axes[shape.normalised], shape.axes[summed]
        if norm.role and other.role:
            if norm.role == other.role:
                continue
        elif norm.size == other.size:
            continue  # nothing tells the two axes apart
        line = "row" if shape.normalised == 1 else "column"
        lines = "rows" if summed == 0 else "columns"
        raise ShapeError(
            f"{factor} normalises each {line} over {norm.role or norm.size}, but {a}*{b} sums "
            f"it over its {lines} ({other.role or other.size}): the {shape.by} runs over the "
            "wrong axis",
            node.offset,
        )


__all__ = ["NUMBER_FUNCTIONS", "ShapeScope", "infer"]
