"""The formulas a lesson declares, as a set: parsed together, checked for cycles, substituted.

``recurrence: T*(d_h**2 + d_h*d_x)`` and ``ratio: grid / recurrence`` are parsed one by one by
:func:`coursekit.verify.expr.parse_formula`; this module finds the ones that refer to each other in
a cycle or use a broken formula (:func:`parse_formulas`), and replaces declared names by their
trees (:func:`expand`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits, parse_formula
from coursekit.verify.tree import (
    CONSTANTS,
    FUNCTIONS,
    BinOp,
    Call,
    Name,
    Neg,
    Node,
    first_offset,
    free_names,
)


def parse_formulas(
    texts: Mapping[str, str], *, limits: Limits = DEFAULT_LIMITS
) -> tuple[dict[str, Node], dict[str, FormulaError]]:
    """Parse every declared formula; return the trees and, separately, the errors by name.

    Formulas that take part in a reference cycle (``a: b + 1``, ``b: 2*a``) are reported as errors
    and left out of the trees; so are formulas that use a formula with an error.
    """
    trees: dict[str, Node] = {}
    errors: dict[str, FormulaError] = {}
    for name, text in texts.items():
        try:
            _check_formula_name(name, text)
            trees[name] = parse_formula(text, limits=limits, source=name)
        except FormulaError as exc:
            errors[name] = exc
    _Dependencies(texts, trees, errors).run()
    for name in errors:
        trees.pop(name, None)
    return trees, errors


def _check_formula_name(name: str, text: str) -> None:
    if not name.isidentifier() or name.startswith("_") or not name.isascii():
        raise FormulaError(f"formula name {name!r} is not an identifier", 0, str(text), name)
    if name in FUNCTIONS or name in CONSTANTS:
        raise FormulaError(f"formula name {name!r} is reserved", 0, str(text), name)


_VISITING, _DONE = 1, 2


class _Dependencies:
    """Marks, by depth-first search, formulas in a cycle and formulas using a broken formula."""

    def __init__(
        self, texts: Mapping[str, str], trees: dict[str, Node], errors: dict[str, FormulaError]
    ):
        self.texts = texts
        self.trees = trees
        self.errors = errors
        self.state: dict[str, int] = {}
        self.path: list[str] = []  # the formulas being visited, outermost first
        self.pending: list[Iterator[str]] = []  # each one's dependencies still to look at

    def run(self) -> None:
        for name in sorted(self.trees):
            if self.state.get(name) is None:
                self.visit(name)

    def mark(self, name: str, message: str, dep: str) -> None:
        if name not in self.errors:
            off = first_offset(self.trees[name], dep) or 0
            self.errors[name] = FormulaError(message, off, self.texts[name], name)

    def push(self, name: str) -> None:
        self.state[name] = _VISITING
        self.path.append(name)
        self.pending.append(iter(sorted(free_names(self.trees[name]))))

    def visit(self, root: str) -> None:
        # Iterative: a chain of formulas thousands deep must not exhaust Python's stack.
        self.push(root)
        while self.path:
            name = self.path[-1]
            for dep in self.pending[-1]:
                if self.step(name, dep):
                    break
            else:
                self.state[name] = _DONE
                self.path.pop()
                self.pending.pop()
                if self.path and name in self.errors:
                    self.mark(self.path[-1], f"uses formula {name!r}, which has an error", name)

    def step(self, name: str, dep: str) -> bool:
        """Look at one dependency of ``name``; true when it must be visited first."""
        seen = self.state.get(dep)
        if dep in self.errors and seen is None:
            self.mark(name, f"uses formula {dep!r}, which has an error", dep)
        elif dep not in self.trees:
            return False
        elif seen == _VISITING:
            cycle = [*self.path[self.path.index(dep) :], dep]
            text = " -> ".join(cycle)
            for i, member in enumerate(cycle[:-1]):
                self.mark(member, f"formulas refer to each other in a cycle: {text}", cycle[i + 1])
        elif seen is None:
            self.push(dep)
            return True
        elif dep in self.errors:
            self.mark(name, f"uses formula {dep!r}, which has an error", dep)
        return False


def expand(node: Node, formulas: Mapping[str, Node], *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Substitute declared formulas for their names, recursively (cycle-safe)."""
    budget = [limits.max_expanded_nodes]

    def go(n: Node, stack: tuple[str, ...]) -> Node:
        budget[0] -= 1
        if budget[0] < 0:
            raise FormulaError("formula too large once declared formulas are substituted", n.offset)
        if isinstance(n, Name):
            if n.id in formulas:
                if n.id in stack:
                    raise FormulaError(
                        "formulas refer to each other in a cycle: " + " -> ".join((*stack, n.id)),
                        n.offset,
                    )
                return go(formulas[n.id], (*stack, n.id))
            return n
        if isinstance(n, Neg):
            return Neg(go(n.operand, stack), n.offset)
        if isinstance(n, BinOp):
            return BinOp(n.op, go(n.left, stack), go(n.right, stack), n.offset)
        if isinstance(n, Call):
            return Call(n.func, tuple(go(a, stack) for a in n.args), n.offset)
        return n

    return go(node, ())


__all__ = ["expand", "parse_formulas"]
