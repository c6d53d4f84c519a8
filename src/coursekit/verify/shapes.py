"""Matrix shapes: which products conform, which functions keep a shape, what a product costs.

Notation may give a symbol a shape (``Q`` is ``T×d_k``) and say what its axes index (the rows of
``Q`` are queries); a function such as ``softmax`` may be declared row-wise. This module infers
the shape of every formula from its tree (:mod:`coursekit.verify.tree`), without sympy and
without ever building a matrix of entries: a shape is two dimension names, so checking
``softmax(Q*K.T/sqrt(d_k))*V`` costs a handful of comparisons whatever ``T`` is.

The rules, in the order a formula is read:

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

:func:`check_formulas` checks a lesson's declared formulas, :func:`infer` one expression,
:func:`cost` and :func:`memory` count multiply-adds and entries as formula trees.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coursekit.verify.tree import (
    FUNCTIONS,
    BinOp,
    Call,
    Name,
    Neg,
    Node,
    Num,
    formula_text,
    free_names,
)

_DIM = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[1-9][0-9]{0,8}")
#: Functions of numbers: a matrix argument is a shape error.
NUMBER_FUNCTIONS = frozenset(FUNCTIONS) - {"transpose", "softmax", "Hadamard"}


class ShapeError(ValueError):
    """A formula whose shapes do not fit; ``offset`` points into the formula's text."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.message = message
        self.offset = offset


class _Opaque(Exception):
    """A construct only the LaTeX reader makes (a sum, an index, a label): its shape is unknown,
    so the expression is not judged (never a false alarm)."""


class _Upstream(Exception):
    """A formula used here has a shape error of its own (reported there, not twice)."""


@dataclass(frozen=True)
class Axis:
    size: str  # a symbol name or a whole number, as text
    role: str | None = None  # what the axis indexes ("queries"), when notation says


@dataclass(frozen=True)
class Shape:
    """A scalar (no axes) or a matrix (rows, columns); ``normalised`` is the axis a row-wise
    function made each line a distribution over (1 for its columns; 0 once transposed)."""

    axes: tuple[Axis, ...] = ()
    normalised: int | None = None
    by: str | None = None  # the row-wise function that normalised it

    @property
    def scalar(self) -> bool:
        return not self.axes

    def text(self) -> str:
        return "a scalar" if self.scalar else "×".join(a.size for a in self.axes)


SCALAR = Shape()


def declared_shape(
    dims: Iterable[object], axes: Iterable[object] | None = None, rename: Mapping[str, str] = {}
) -> Shape:
    """The shape notation declares (``[T, d_k]``, ``[d]`` a column, ``[]`` a scalar)."""
    sizes = [str(d).strip() for d in dims]
    if len(sizes) > 2:
        raise ShapeError(f"a shape has at most two dimensions, not {len(sizes)}")
    for size in sizes:
        if not _DIM.fullmatch(size):
            raise ShapeError(
                f"dimension {size!r} must be a symbol (T, d_k) or a positive whole number"
            )
    roles: list[str | None] = [str(r) for r in axes] if axes is not None else [None for _ in sizes]
    if len(roles) != len(sizes):
        raise ShapeError(f"axes names {len(roles)} axes, the shape has {len(sizes)}")
    if len(sizes) == 1:
        sizes, roles = [sizes[0], "1"], [roles[0], None]
    return _squeeze(
        Shape(tuple(Axis(rename.get(s, s), r) for s, r in zip(sizes, roles, strict=True)))
    )


def _squeeze(shape: Shape) -> Shape:
    return SCALAR if all(a.size == "1" for a in shape.axes) else shape


class Shapes:
    """The shapes of symbols and of a lesson's declared formulas (inferred once each)."""

    def __init__(
        self,
        symbols: Mapping[str, Shape],
        rowwise: Iterable[str] = (),
        formulas: Mapping[str, Node] | None = None,
    ):
        self.symbols = dict(symbols)
        self.rowwise = frozenset(rowwise)
        self.formulas = dict(formulas or {})
        # name -> its shape, the error in its own text, or the name of the used formula at fault
        self._done: dict[str, Shape | ShapeError | str] = {}
        self._warm = False
        self._shaped: set[str] | None = None  # the formulas that involve shapes

    def uses_shapes(self, node: Node) -> bool:
        """Whether a tree, or a formula it uses, involves a shaped symbol or a transpose."""
        if self._shaped is None:
            self._shaped = set()
            for name in dependency_order(self.formulas):  # each after the formulas it uses
                if self._direct(self.formulas[name]):
                    self._shaped.add(name)
        return self._direct(node)

    def _direct(self, node: Node) -> bool:
        assert self._shaped is not None
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, Name):
                if n.id in self.symbols or n.id in self._shaped:
                    return True
            elif isinstance(n, Neg):
                stack.append(n.operand)
            elif isinstance(n, BinOp):
                stack.extend((n.left, n.right))
            elif isinstance(n, Call):
                if n.func == "transpose" or n.func in self.rowwise:
                    return True
                stack.extend(n.args)
        return False

    def formula(self, name: str) -> Shape:
        """A declared formula's shape; :class:`_Upstream` naming the formula whose own shapes
        do not fit when that is this one or one it uses."""
        if not self._warm:
            self._warm = True
            for each in dependency_order(self.formulas):  # uses first: no deep recursion
                self._infer(each)
        done = self._done.get(name)
        if done is None:
            self._infer(name)
            done = self._done[name]
        if isinstance(done, ShapeError):
            raise _Upstream(name)
        if isinstance(done, str):
            raise _Upstream(done)
        return done

    def _infer(self, name: str) -> None:
        if name in self._done:
            return
        self._done[name] = ShapeError("formulas refer to each other in a cycle")  # a guard only
        try:
            self._done[name] = infer(self.formulas[name], self)
        except ShapeError as exc:
            self._done[name] = exc
        except _Upstream as up:
            self._done[name] = str(up.args[0])  # the formula at fault, reported there
        except RecursionError:  # one formula nested beyond the parser's own limits
            self._done[name] = ShapeError("formula nested too deeply to check its shapes")

    def error(self, name: str) -> ShapeError | None:
        """The shape error in the formula's own text, if any (after :meth:`formula`)."""
        done = self._done.get(name)
        return done if isinstance(done, ShapeError) else None

    def of_name(self, name: str) -> Shape:
        if name in self.formulas:
            return self.formula(name)
        return self.symbols.get(name, SCALAR)


def infer(node: Node, shapes: Shapes) -> Shape:
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


def _call(node: Call, shapes: Shapes) -> Shape:
    args = [infer(a, shapes) for a in node.args]
    if node.func == "transpose":
        (a,) = args
        if a.scalar:
            return a
        flip = None if a.normalised is None else 1 - a.normalised
        return Shape((a.axes[1], a.axes[0]), flip, a.by)
    if node.func not in FUNCTIONS and node.func not in shapes.rowwise:
        raise _Opaque(node.func)
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
    return _squeeze(Shape((left.axes[0], right.axes[1])))


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


def check_formulas(shapes: Shapes) -> dict[str, Shape | ShapeError]:
    """Each declared formula that involves shapes: its shape, or the error in its own text (a
    formula that only uses a broken one is left out: the error is reported where it is).

    Formulas are inferred in dependency order, each one's uses already known, so a chain of
    formulas thousands deep costs no Python stack.
    """
    out: dict[str, Shape | ShapeError] = {}
    for name, tree in shapes.formulas.items():
        if not shapes.uses_shapes(tree):
            continue
        try:
            out[name] = shapes.formula(name)
        except _Upstream:
            own = shapes.error(name)
            if own is not None:
                out[name] = own
    return out


def dependency_order(formulas: Mapping[str, Node]) -> list[str]:
    """Formula names, each after the formulas it uses (iterative; the formulas hold no cycle)."""
    order: list[str] = []
    placed: set[str] = set()
    for root in formulas:
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if name in placed:
                continue
            if expanded:
                placed.add(name)
                order.append(name)
                continue
            stack.append((name, True))
            uses = sorted(n for n in free_names(formulas[name]) if n in formulas)
            stack.extend((dep, False) for dep in uses if dep not in placed)
    return order


def shape_misfit(node: Node, shapes: Shapes) -> str | None:
    """Why the shapes in ``node`` do not fit (None when they do, or it uses none)."""
    if not shapes.uses_shapes(node):
        return None
    try:
        infer_text(node, shapes)
    except ShapeError as exc:
        return exc.message
    except _Opaque:
        return None
    return None


def infer_text(node: Node, shapes: Shapes) -> Shape:
    """:func:`infer`, with a formula's own error reported as the use of a broken formula."""
    try:
        return infer(node, shapes)
    except _Upstream as up:
        raise ShapeError(f"uses formula {up.args[0]!r}, whose shapes do not fit") from None


__all__ = [
    "NUMBER_FUNCTIONS",
    "SCALAR",
    "Axis",
    "Shape",
    "ShapeError",
    "Shapes",
    "check_formulas",
    "declared_shape",
    "infer",
    "infer_text",
    "shape_misfit",
]
