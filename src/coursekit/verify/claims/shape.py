"""The ``shape`` claim kind, and the counts (``cost:``, ``memory:``) value, order and identity claims
take.

``expr: softmax(Q*K.T/sqrt(d_k))*V`` with ``shape: [T, d_v]`` holds when the shapes notation
declares make the expression a ``T×d_v`` matrix (and, with ``axes: [queries, values]``, when its
rows index queries and its columns values).  ``where`` may rename dimensions (``{d_v: d_k}``).
Pure Python over :mod:`coursekit.verify.shapes`: nothing is built entry by entry.
"""

from __future__ import annotations

from dataclasses import replace

from coursekit.verify.claims.context import Context, _require
from coursekit.verify.claims.model import CheckResult, Claim, ClaimError
from coursekit.verify.shape_count import cost, memory
from coursekit.verify.shapes import (
    Shape,
    ShapeError,
    Shapes,
    check_formulas,
    declared_shape,
    infer_text,
)
from coursekit.verify.status import Status
from coursekit.verify.tree import formula_text


def _shapes(ctx: Context, claim: Claim) -> Shapes:
    """The lesson's shapes, with the claim's ``where`` renaming dimensions."""
    if not claim.where:
        return ctx.shapes
    rename: dict[str, str] = {}
    for key, text in claim.where:
        rename[key] = text.strip()
    try:
        symbols = {
            name: declared_shape(dims, axes, rename) for name, (dims, axes) in ctx.declared.items()
        }
    except ShapeError as exc:
        raise ClaimError(f"where: {exc.message}", "where") from None
    return Shapes(symbols, ctx.shapes.rowwise, ctx.trees)


def check_shape(ctx: Context, claim: Claim) -> CheckResult:
    expr_t = _require(claim.expr, "expr", claim)
    if claim.shape is None:
        raise ClaimError("a shape claim needs shape, such as [T, d_v] ([] for a scalar)", "shape")
    shapes = _shapes(ctx, claim)
    try:
        stated = declared_shape(claim.shape, claim.axes)
    except ShapeError as exc:
        raise ClaimError(exc.message, "axes" if "axes" in exc.message else "shape") from None
    node = ctx.node(expr_t, "expr")
    try:
        found = infer_text(node, shapes)
    except ShapeError as exc:
        return CheckResult("false", f"{expr_t}: {exc.message}")
    sizes = [a.size for a in found.axes] == [a.size for a in stated.axes]
    if not sizes:
        return CheckResult(
            "false", f"{expr_t} is {found.text()}, but the claim says {stated.text()}"
        )
    for which, got, want in zip(("rows", "columns"), found.axes, stated.axes, strict=False):
        if want.role and got.role != want.role:
            return CheckResult(
                "false",
                f"the {which} of {expr_t} index {got.role or 'nothing declared'}, but the claim "
                f"says {want.role}",
            )
    return CheckResult("ok", f"{expr_t} is {_described(found)}")


def _described(shape: Shape) -> str:
    roles = [a.role for a in shape.axes]
    if shape.scalar or not any(roles):
        return shape.text()
    return f"{shape.text()} ({' by '.join(r or '?' for r in roles)})"


#: The fields of the sympy claim kinds that hold an expression of the lesson's symbols.
_EXPRESSIONS = ("lhs", "rhs", "expr", "order")


def numbers_only(ctx: Context, claim: Claim) -> CheckResult | None:
    """The sympy kinds compare numbers: a field that uses matrices must come out a scalar.

    A field whose shapes do not fit makes the claim false (its statement is about nothing); a
    matrix-valued field cannot be checked as a number and says what to write instead.
    """
    for name in _EXPRESSIONS:
        text = getattr(claim, name)
        if text is None:
            continue
        node = ctx.node(text, name)
        if not ctx.shapes.uses_shapes(node):
            continue
        try:
            shape = infer_text(node, ctx.shapes)
        except ShapeError as exc:
            return CheckResult("false", f"{text}: {exc.message}", field=name)
        if not shape.scalar:
            raise ClaimError(
                f"{text} is a {shape.text()} matrix, and a {claim.kind} claim compares numbers: "
                "state its shape with a shape claim, or count it with cost: or memory:",
                name,
            )
    return None


def counted(ctx: Context, claim: Claim) -> tuple[Claim, str]:
    """A value or order claim with ``cost:``/``memory:`` as one with the count as its ``expr``
    (an identity's ``lhs``): ``cost: Q*K.T`` with ``rhs: grid`` ties a typed formula to the
    matrices it counts."""
    field = "cost" if claim.cost is not None else "memory"
    text = claim.cost if claim.cost is not None else claim.memory
    assert text is not None
    if claim.cost is not None and claim.memory is not None:
        raise ClaimError("give cost or memory, not both", "memory")
    side = "lhs" if claim.kind == "identity" else "expr"
    if claim.kind not in ("value", "order", "identity"):
        raise ClaimError(
            f"{field} counts for a value, order or identity claim, not {claim.kind}", field
        )
    if getattr(claim, side) is not None:
        raise ClaimError(f"give {side} or {field}, not both: {field} derives the {side}", field)
    node = ctx.node(text, field)
    try:
        count = cost(node, ctx.shapes) if field == "cost" else memory(node, ctx.shapes)
    except ShapeError as exc:
        raise ClaimError(f"{text}: {exc.message}", field) from None
    what = "the multiply-adds of" if field == "cost" else "the entries of"
    derived = formula_text(count)
    changed = replace(claim, cost=None, memory=None)
    changed = replace(changed, lhs=derived) if side == "lhs" else replace(changed, expr=derived)
    return changed, f"{what} {text}: {derived}; "


def shape_verdicts(ctx: Context) -> list[tuple[str, int, Status, str, int | None]]:
    """``(formula, index, status, message, offset)`` for each declared formula that involves
    shapes: ``ok`` with its shape, or ``false`` pointing at the product that does not conform.
    Pure Python and quick, so the runner checks them in the parent, beside the formula syntax.
    """
    found = check_formulas(ctx.shapes)
    out: list[tuple[str, int, Status, str, int | None]] = []
    for i, name in enumerate(ctx.texts):
        result = found.get(name)
        if isinstance(result, ShapeError):
            out.append((name, i, "false", result.message, result.offset))
        elif result is not None:
            out.append((name, i, "ok", f"{name} is {_described(result)}", None))
    return out


__all__ = ["check_shape", "counted", "numbers_only", "shape_verdicts"]
