"""What a matrix shape is: two axes with a size and, when notation says, what each indexes.

A shape is data only (no entries are ever built): :class:`Shape` of :class:`Axis` values,
:data:`SCALAR` for no axes, and :func:`declared_shape` reading what notation declares
(``[T, d_k]``, ``[d]`` a column, ``[]`` a scalar). How a formula's shape follows from its parts
is :mod:`coursekit.verify.shape_infer`; the shapes of one lesson are
:class:`coursekit.verify.shapes.Shapes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from coursekit.records import record

_DIM = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[1-9][0-9]{0,8}")


class ShapeError(ValueError):
    """A formula whose shapes do not fit; ``offset`` points into the formula's text."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.message = message
        self.offset = offset


class OpaqueShape(Exception):
    """A construct only the LaTeX reader makes (a sum, an index, a label): its shape is unknown,
    so the expression is not judged (never a false alarm)."""


class UpstreamShapeError(Exception):
    """A formula used here has a shape error of its own (reported there, not twice); the
    argument is that formula's name."""


@record(frozen=True)
class Axis:
    size: str  # a symbol name or a whole number, as text
    role: str | None = None  # what the axis indexes ("queries"), when notation says


@record(frozen=True)
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
    return squeeze(
        Shape(tuple(Axis(rename.get(s, s), r) for s, r in zip(sizes, roles, strict=True)))
    )


def squeeze(shape: Shape) -> Shape:
    """A shape of size 1×1 (or 1) is a scalar again."""
    return SCALAR if all(a.size == "1" for a in shape.axes) else shape


__all__ = [
    "SCALAR",
    "Axis",
    "OpaqueShape",
    "Shape",
    "ShapeError",
    "UpstreamShapeError",
    "declared_shape",
    "squeeze",
]
