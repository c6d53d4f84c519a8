"""Matrix shapes of one lesson: which products conform, which functions keep a shape.

Notation may give a symbol a shape (``Q`` is ``T×d_k``) and say what its axes index (the rows of
``Q`` are queries); a function such as ``softmax`` may be declared row-wise. This module infers
the shape of every formula from its tree (:mod:`coursekit.verify.tree`), without sympy and
without ever building a matrix of entries: a shape is two dimension names, so checking
``softmax(Q*K.T/sqrt(d_k))*V`` costs a handful of comparisons whatever ``T`` is.

The pieces, each one idea: what a shape is (:mod:`coursekit.verify.shape_model`), how a
formula's shape follows from its parts (:mod:`coursekit.verify.shape_infer`, where the rules are
listed), and here the shapes of one lesson -- its symbols and its declared formulas, each
inferred once, in dependency order. :func:`check_formulas` checks a lesson's declared formulas,
:func:`infer` one expression; counting from shapes (``cost:``, ``memory:``) is
:mod:`coursekit.verify.shape_count`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from coursekit.verify.shape_infer import NUMBER_FUNCTIONS, infer
from coursekit.verify.shape_model import (
    SCALAR,
    Axis,
    OpaqueShape,
    Shape,
    ShapeError,
    UpstreamShapeError,
    declared_shape,
)
from coursekit.verify.tree import BinOp, Call, Name, Neg, Node, free_names


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
        """A declared formula's shape; :class:`UpstreamShapeError` naming the formula whose own shapes
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
            raise UpstreamShapeError(name)
        if isinstance(done, str):
            raise UpstreamShapeError(done)
        return done

    def _infer(self, name: str) -> None:
        if name in self._done:
            return
        self._done[name] = ShapeError("formulas refer to each other in a cycle")  # a guard only
        try:
            self._done[name] = infer(self.formulas[name], self)
        except ShapeError as exc:
            self._done[name] = exc
        except UpstreamShapeError as up:
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
        except UpstreamShapeError:
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
    except OpaqueShape:
        return None
    return None


def infer_text(node: Node, shapes: Shapes) -> Shape:
    """:func:`infer`, with a formula's own error reported as the use of a broken formula."""
    try:
        return infer(node, shapes)
    except UpstreamShapeError as up:
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
