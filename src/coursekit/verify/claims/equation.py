"""Equations as shown: the reader's LaTeX against the declared formula text."""

from __future__ import annotations

from coursekit.verify.claims.context import (
    Context,
    _differs,
    _fmt,
    _point_text,
)
from coursekit.verify.claims.model import (
    CheckResult,
)
from coursekit.verify.declared import expand
from coursekit.verify.expr import FormulaError
from coursekit.verify.latex import parse_latex_sides
from coursekit.verify.shapes import shape_misfit
from coursekit.verify.symbolic import sympy_module, to_sympy
from coursekit.verify.tree import Name, first_offset, free_names


def check_equation_latex(
    latex: str,
    declared: str,
    context: Context | None = None,
    *,
    name: str | None = None,
) -> CheckResult:
    """Is the LaTeX the reader sees the same expression as the declared formula text?

    ``declared`` is formula text (or the name of a formula in ``context``).  Every side of an
    ``=`` chain that is not a label must equal it up to algebraic equivalence; a side that is just
    the formula's own name (``\\mathrm{grid}``) counts as a label.
    """
    sp = sympy_module()
    ctx = context or Context()
    try:
        target = ctx.expr(declared, name or "formula")
        sides = parse_latex_sides(latex, limits=ctx.limits)
    except FormulaError as exc:
        return CheckResult("error", exc.message, offset=exc.offset, field=exc.source)
    for side in sides:
        if side.relation not in {"", "="}:
            return CheckResult(
                "error",
                f"relation {side.relation} is not checked against a formula: only '=' chains are",
                offset=side.offset,
            )
    shown = [
        s
        for s in sides
        if s.node is not None and not (isinstance(s.node, Name) and s.node.id == name)
    ]
    if not shown:
        return CheckResult("error", "the equation shows no expression, only labels", offset=0)
    label = name or "the formula"
    for side in shown:
        assert side.node is not None
        try:
            for n in sorted(free_names(side.node)):
                if n in ctx.errors:
                    raise FormulaError(
                        f"uses formula {n!r}, which has an error", first_offset(side.node, n) or 0
                    )
            e = to_sympy(expand(side.node, ctx.trees, limits=ctx.limits), ctx.table)
        except FormulaError as exc:
            return CheckResult("error", exc.message, offset=exc.offset)
        misfit = shape_misfit(side.node, ctx.shapes)
        if misfit is not None:  # sympy cannot see it: matrices are opaque symbols there
            return CheckResult(
                "false", f"the equation shows {side.source}: {misfit}", offset=side.offset
            )
        diff = sp.simplify(sp.cancel(e - target))
        if diff == 0:
            continue
        point = _differs(ctx, diff, f"eq:{label}")
        if point is None:
            return CheckResult(
                "unproven",
                f"could not prove the equation's {side.source} equals {label} = {_fmt(target)}",
                offset=side.offset,
            )
        return CheckResult(
            "false",
            f"the equation shows {side.source} = {_fmt(e)}, but {label} is {_fmt(target)} "
            f"(they differ at {_point_text(point)})",
            offset=side.offset,
        )
    return CheckResult("ok", f"the equation shows {label}")
