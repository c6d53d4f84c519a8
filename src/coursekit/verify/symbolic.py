"""The sympy side of formulas: symbols with the lesson's assumptions, and trees turned into sympy.

:mod:`coursekit.verify.expr` and :mod:`coursekit.verify.latex` parse text into sympy-free trees
(:mod:`coursekit.verify.tree`); this module is the one place those trees meet sympy, which is
imported lazily (:func:`sympy_module`) so that ``import coursekit.verify`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from coursekit.verify.declared import expand
from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits, parse_formula
from coursekit.verify.tree import BinOp, Name, Neg, Node, Num

#: sympy is untyped; expressions are passed around as ``Any`` under this name.
SympyExpr: TypeAlias = Any

#: Assumption kinds a lesson may declare (``assume: {positive: [T, d]}``).
ASSUMPTION_KINDS: frozenset[str] = frozenset(
    {"positive", "negative", "nonnegative", "nonpositive", "nonzero", "integer", "real", "rational"}
)


def sympy_module() -> Any:
    """Import sympy on first use (kept out of ``import coursekit.verify``)."""
    import sympy

    return sympy


class SymbolTable:
    """One sympy Symbol per name, carrying the lesson's assumptions.

    Both front ends go through the same table, so ``d_h`` from a formula and ``d_h`` from LaTeX
    are the same symbol with the same assumptions.
    """

    def __init__(
        self, assume: Mapping[str, Iterable[str]] | None = None, matrices: Iterable[str] = ()
    ):
        # A matrix is a non-commutative symbol: QK^T and K^T Q must not compare equal.
        self.matrices = frozenset(matrices)
        self.kinds: dict[str, dict[str, bool]] = {}
        for kind, names in (assume or {}).items():
            if kind not in ASSUMPTION_KINDS:
                allowed = ", ".join(sorted(ASSUMPTION_KINDS))
                raise FormulaError(
                    f"unknown assumption {kind!r} (allowed: {allowed})", 0, "", "assume"
                )
            for name in names:
                if not isinstance(name, str) or not name.isidentifier():
                    raise FormulaError(
                        f"assumption on {name!r}: not a symbol name", 0, "", "assume"
                    )
                self.kinds.setdefault(name, {})[kind] = True
        self._cache: dict[str, SympyExpr] = {}

    def symbol(self, name: str) -> SympyExpr:
        sym = self._cache.get(name)
        if sym is None:
            sp = sympy_module()
            try:
                kinds = self.kinds.get(name, {})
                if name in self.matrices:
                    kinds = {**kinds, "commutative": False}
                sym = sp.Symbol(name, **kinds)
            except Exception as exc:  # sympy's InconsistentAssumptions and friends
                raise FormulaError(
                    f"inconsistent assumptions on {name}: {exc}", 0, "", "assume"
                ) from None
            self._cache[name] = sym
        return sym

    def assumptions(self, name: str) -> dict[str, bool]:
        return dict(self.kinds.get(name, {}))


def to_sympy(node: Node, table: SymbolTable) -> SympyExpr:
    """Build the sympy expression for an (already expanded) tree."""
    sp = sympy_module()

    def go(n: Node) -> SympyExpr:
        if isinstance(n, Num):
            return sp.Rational(n.value.numerator, n.value.denominator)
        if isinstance(n, Name):
            if n.id == "pi":
                return sp.pi
            return table.symbol(n.id)
        if isinstance(n, Neg):
            return -go(n.operand)
        if isinstance(n, BinOp):
            a, b = go(n.left), go(n.right)
            if n.op == "+":
                return a + b
            if n.op == "-":
                return a - b
            if n.op == "*":
                return a * b
            if n.op == "/":
                return a / b
            return a**b
        args = [go(a) for a in n.args]
        f = n.func
        if f == "sigmoid":
            return 1 / (1 + sp.exp(-args[0]))
        if f == "ln":
            return sp.log(args[0])
        fn = {
            "sqrt": sp.sqrt,
            "exp": sp.exp,
            "log": sp.log,
            "sin": sp.sin,
            "cos": sp.cos,
            "tan": sp.tan,
            "tanh": sp.tanh,
            "Abs": sp.Abs,
            "floor": sp.floor,
            "ceiling": sp.ceiling,
            "Max": sp.Max,
            "Min": sp.Min,
        }.get(f)
        if fn is None:
            # A function the reader's LaTeX applies (softmax, Sum, transpose, Indexed, ...):
            # kept as an unevaluated application, so equal shapes compare equal, and no more.
            return sp.Function(f)(*args)
        try:
            return fn(*args)
        except (ValueError, TypeError) as exc:
            # sympy refuses some applications outright: Max of what it cannot order (sqrt(-x)
            # with x positive is I*sqrt(x)). A formula it cannot build, not a crash.
            raise FormulaError(f"sympy cannot build {f}(...): {exc}", n.offset) from None

    return go(node)


def build(
    text: str,
    table: SymbolTable,
    formulas: Mapping[str, Node] | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    source: str | None = None,
) -> SympyExpr:
    """Parse ``text``, substitute declared formulas and build the sympy expression."""
    node = parse_formula(text, limits=limits, source=source)
    try:
        node = expand(node, formulas or {}, limits=limits)
    except FormulaError as exc:
        exc.text, exc.source = text, source
        raise
    return to_sympy(node, table)


__all__ = [
    "ASSUMPTION_KINDS",
    "SymbolTable",
    "SympyExpr",
    "build",
    "sympy_module",
    "to_sympy",
]
