"""The sympy side shared by every claim kind: a lesson's :class:`Context` and the helpers that
substitute, format and sample expressions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from coursekit.verify.claims.model import (
    Claim,
    ClaimError,
)
from coursekit.verify.claims.numbers import show, value_text
from coursekit.verify.declared import expand, parse_formulas
from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits, parse_formula
from coursekit.verify.shapes import Shape, ShapeError, Shapes, declared_shape
from coursekit.verify.symbolic import SymbolTable, SympyExpr, sympy_module, to_sympy
from coursekit.verify.tree import Name, Node, first_offset, free_names

if TYPE_CHECKING:
    import random


class Context:
    """A lesson's assumptions and declared formulas, parsed once (sympy is imported lazily)."""

    def __init__(
        self,
        assume: Mapping[str, Iterable[str]] | None = None,
        formulas: Mapping[str, str] | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        seed: int = 20240601,
        shapes: Mapping[str, tuple[Sequence[str], Sequence[str] | None]] | None = None,
        rowwise: Iterable[str] = (),
    ):
        self.limits = limits
        matrices = [
            name
            for name, (dims, _) in (shapes or {}).items()
            if list(dims) not in ([], ["1"], ["1", "1"])
        ]
        self.table = SymbolTable(assume, matrices)
        self.texts = dict(formulas or {})
        self.trees, self.errors = parse_formulas(self.texts, limits=limits)
        self.seed = seed
        self.declared: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {}
        symbols: dict[str, Shape] = {}
        for name, (dims, axes) in (shapes or {}).items():
            try:
                symbols[name] = declared_shape(dims, axes)
            except ShapeError as exc:
                raise FormulaError(f"shape of {name}: {exc.message}", 0, "", "shapes") from None
            self.declared[name] = (tuple(dims), None if axes is None else tuple(axes))
        self.shapes = Shapes(symbols, rowwise, self.trees)

    def node(self, text: str, field: str) -> Node:
        try:
            node = parse_formula(text, limits=self.limits, source=field)
        except FormulaError as exc:
            exc.source = field
            raise
        for name in sorted(free_names(node)):
            if name in self.errors:
                raise FormulaError(
                    f"uses formula {name!r}, which has an error",
                    first_offset(node, name) or 0,
                    text,
                    field,
                )
        return node

    def expr(self, text: str, field: str) -> SympyExpr:
        node = self.node(text, field)
        try:
            node = expand(node, self.trees, limits=self.limits)
        except FormulaError as exc:
            exc.text, exc.source = text, field
            raise
        return to_sympy(node, self.table)

    def formula(self, name: str) -> SympyExpr:
        if name in self.errors:
            raise self.errors[name]
        if name not in self.trees:
            raise FormulaError(f"no formula named {name!r}", 0, "", name)
        return to_sympy(expand(Name(name, 0), self.trees, limits=self.limits), self.table)

    def where(self, claim: Claim) -> dict[Any, Any]:
        subs: dict[Any, Any] = {}
        for key, text in claim.where:
            fld = f"where.{key}"
            if not key.isidentifier() or key in self.trees:
                raise FormulaError(f"where: {key!r} is not a symbol", 0, key, fld)
            subs[self.table.symbol(key)] = self.expr(text, fld)
        return subs


def _where_text(claim: Claim) -> str:
    return ", ".join(f"{k}={v}" for k, v in claim.where)


def _at(claim: Claim) -> str:
    w = _where_text(claim)
    return f" at {w}" if w else ""


def _subs(e: SympyExpr, subs: Mapping[Any, Any]) -> SympyExpr:
    """``e`` with each symbol of ``subs`` replaced by its value, all at once.

    Every key is a symbol and no expression binds a variable (the formula grammar has no sums or
    integrals), so an exact replacement is what ``subs(simultaneous=True)`` computes, at a
    third of its cost: ``subs`` was most of a lesson's verification time.
    """
    return e.xreplace(dict(subs)) if subs else e


def _fmt(e: SympyExpr) -> str:
    sp = sympy_module()
    if getattr(e, "is_Rational", False):
        return show(Fraction(int(e.p), int(e.q)))
    return str(sp.sstr(e))


def _exact(e: SympyExpr) -> Fraction | None:
    if getattr(e, "is_Rational", False):
        return Fraction(int(e.p), int(e.q))
    return None


def _number_text(e: SympyExpr) -> str:
    q = _exact(e)
    if q is not None:
        return value_text(q)
    return str(sympy_module().N(e, 40))


def _require(value: str | None, name: str, claim: Claim) -> str:
    if value is None or value == "":
        raise ClaimError(f"a {claim.kind} claim needs {name}", name)
    return value


def _sample(
    ctx: Context,
    symbols: Sequence[Any],
    rng: random.Random,
    conditions: Sequence[tuple[Any, bool]] = (),
    tries: int = 400,
) -> Iterable[dict[Any, Any]]:
    """Points respecting the symbols' assumptions (and the conditions ``g > 0`` / ``g >= 0``)."""
    sp = sympy_module()
    found = 0
    for _ in range(tries):
        point: dict[Any, Any] = {}
        for s in symbols:
            integer = bool(s.is_integer)
            if s.is_positive or s.is_nonnegative:
                lo, hi = 1, 2000
            elif s.is_negative or s.is_nonpositive:
                lo, hi = -2000, -1
            else:
                lo, hi = -2000, 2000
            scale = rng.choice((1, 1, 10, 100)) if hi > 10 else 1
            n = rng.randint(
                max(lo, -(hi // scale)) if lo < 0 else lo, max(lo, hi // scale) if hi > 0 else hi
            )
            if integer:
                point[s] = sp.Integer(n)
            else:
                point[s] = (
                    sp.Rational(n * rng.randint(1, 7), rng.randint(1, 7))
                    if n
                    else sp.Rational(1, 3)
                )
        ok = True
        for g, strict in conditions:
            v = _subs(g, point)
            if not v.is_number:
                ok = False
                break
            v = sp.N(v, 30)
            if (v <= 0) if strict else (v < 0):
                ok = False
                break
        if ok:
            found += 1
            yield point
            if found >= 40:
                return


def _point_text(point: Mapping[Any, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(point.items(), key=lambda kv: str(kv[0])))


def _differs(ctx: Context, diff: SympyExpr, claim_id: str) -> dict[Any, Any] | None:
    """A sample point where ``diff`` is clearly non-zero, or None."""
    import random

    sp = sympy_module()
    rng = random.Random(f"{ctx.seed}:{claim_id}")
    syms = sorted(diff.free_symbols, key=str)
    for point in _sample(ctx, syms, rng):
        try:
            v = sp.N(_subs(diff, point), 40)
        except Exception:  # evaluation trouble at one point is not a verdict
            continue
        if v.is_number and v.is_finite and not v.has(sp.I) and abs(v) > sp.Float(10) ** -20:
            return point
    return None
