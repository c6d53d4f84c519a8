"""Formulas in Python syntax, parsed by a whitelisting walk over Python's ``ast``.

An author declares each derived formula once, e.g. ``recurrence: T*(d_h**2 + d_h*d_x)`` or
``ratio: grid / recurrence``.  The text is handed to :func:`ast.parse` (which only *parses*) and the
resulting tree is walked with an explicit whitelist:

* numbers (``int`` and decimal literals, kept exact as fractions; no complex, no strings, no bools);
* names (ASCII identifiers not starting with ``_``); ``pi`` is the constant, every other name is a
  symbol or, if declared, another formula;
* ``+ - * / **``, unary minus and plus;
* calls ``f(x, ...)`` where ``f`` is one of :data:`~coursekit.verify.tree.FUNCTIONS`, positional
  arguments only.

Everything else -- attribute access, subscripts, lambdas, comprehensions, comparisons, keyword
arguments, ``^`` -- is a :class:`FormulaError` carrying a message and the character offset of the
offending construct.  Caps bound the text length, the node count, the size of numeric literals and
of constant exponents (``9**9**9`` is refused before anything is computed).  Nothing is ever
evaluated with ``eval``, ``sympify`` or ``parse_expr``.

Declared formulas may use each other; :func:`expand` substitutes them (detecting cycles) and
:mod:`coursekit.verify.symbolic` builds the sympy expression; this module never imports sympy.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from coursekit.verify.tree import (
    CONSTANTS,
    FUNCTIONS,
    BinaryOp,
    BinOp,
    Call,
    Name,
    Neg,
    Node,
    Num,
    first_offset,
    free_names,
    node_count,
)


class FormulaError(ValueError):
    """A formula (or LaTeX) text that is not accepted.

    ``offset`` is the 0-based character offset into ``text`` of the offending construct;
    ``source`` names what was being parsed (a formula name, a claim field) when known.
    """

    def __init__(self, message: str, offset: int = 0, text: str = "", source: str | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.text = text
        self.source = source

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{self.message} (at column {self.offset + 1})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FormulaError, (self.message, self.offset, self.text, self.source))


@dataclass(frozen=True)
class Limits:
    """Caps applied before anything is built."""

    max_length: int = 2000
    max_nodes: int = 400
    max_expanded_nodes: int = 20000
    max_literal_digits: int = 100
    max_exponent: int = 1000
    max_constant_digits: int = 2000


DEFAULT_LIMITS = Limits()

_BINOPS: dict[type[ast.operator], BinaryOp] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
}

_REFUSED: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambda",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Compare: "comparisons (write an equation as separate sides)",
    ast.BoolOp: "boolean operators",
    ast.IfExp: "conditional expressions",
    ast.NamedExpr: "assignment expressions",
    ast.JoinedStr: "strings",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.Starred: "starred arguments",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slices",
}


def _digits(q: Fraction) -> int:
    return len(str(abs(q.numerator))) + len(str(q.denominator)) - 1


class _Walker:
    def __init__(self, text: str, lead: int, limits: Limits, source: str | None):
        self.text = text
        self.lead = lead
        self.limits = limits
        self.source = source

    def fail(
        self, message: str, node: ast.AST | None = None, offset: int | None = None
    ) -> FormulaError:
        if offset is None:
            offset = self.lead + (getattr(node, "col_offset", 0) if node is not None else 0)
        return FormulaError(message, offset, self.text, self.source)

    def off(self, node: ast.AST) -> int:
        return self.lead + int(getattr(node, "col_offset", 0))

    def walk(self, node: ast.AST) -> tuple[Node, Fraction | None]:
        """Return the tree and, for a constant rational subtree, its (bounded) value."""
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            name = node.id
            if name.startswith("_"):
                raise self.fail(f"name {name!r} is not allowed: names may not start with '_'", node)
            if name in FUNCTIONS:
                raise self.fail(f"function {name!r} used without arguments", node)
            return Name(name, self.off(node)), None
        if isinstance(node, ast.UnaryOp):
            operand, value = self.walk(node.operand)
            if isinstance(node.op, ast.USub):
                return Neg(operand, self.off(node)), (-value if value is not None else None)
            if isinstance(node.op, ast.UAdd):
                return operand, value
            raise self.fail(f"operator {type(node.op).__name__} is not allowed", node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        what = _REFUSED.get(type(node), type(node).__name__)
        raise self.fail(f"{what} not allowed in a formula", node)

    def constant(self, node: ast.Constant) -> tuple[Node, Fraction | None]:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"literal {value!r} is not allowed: only numbers", node)
        start = self.off(node)
        end = self.lead + int(node.end_col_offset or 0)
        literal = self.text[start:end].replace("_", "")
        if len(literal) > self.limits.max_literal_digits:
            raise self.fail(
                f"number literal longer than {self.limits.max_literal_digits} characters", node
            )
        if isinstance(value, int):
            q = Fraction(value)
        else:
            _, _, exponent = literal.lower().partition("e")
            if exponent and abs(int(exponent)) > self.limits.max_exponent:
                raise self.fail("number literal exponent too large", node)
            try:
                q = Fraction(literal)
            except (ValueError, ZeroDivisionError):
                raise self.fail(f"cannot read number {literal!r}", node) from None
        return Num(q, start), q

    def binop(self, node: ast.BinOp) -> tuple[Node, Fraction | None]:
        op = _BINOPS.get(type(node.op))
        if op is None:
            hint = " (write powers as **)" if isinstance(node.op, ast.BitXor) else ""
            sym = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.BitXor: "^"}.get(
                type(node.op), type(node.op).__name__
            )
            raise self.fail(f"operator {sym} is not allowed{hint}", node)
        left, lv = self.walk(node.left)
        right, rv = self.walk(node.right)
        value = self.fold(op, lv, rv, node)
        return BinOp(op, left, right, self.off(node)), value

    def fold(
        self, op: str, lv: Fraction | None, rv: Fraction | None, node: ast.BinOp
    ) -> Fraction | None:
        limits = self.limits
        if op == "**":
            if rv is not None:
                if abs(rv) > limits.max_exponent:
                    raise self.fail(
                        f"exponent {rv} exceeds the limit of {limits.max_exponent}", node.right
                    )
                if lv is not None and rv.denominator == 1:
                    if lv == 0 and rv < 0:
                        raise self.fail("division by zero", node)
                    if (
                        lv not in (0, 1, -1)
                        and abs(int(rv)) * _digits(lv) > limits.max_constant_digits
                    ):
                        raise self.fail("constant too large", node)
                    return lv ** int(rv)
            return None
        if op == "/" and rv == 0:
            raise self.fail("division by zero", node.right)
        if lv is None or rv is None:
            return None
        if op == "+":
            result = lv + rv
        elif op == "-":
            result = lv - rv
        elif op == "*":
            result = lv * rv
        else:
            result = lv / rv
        if _digits(result) > limits.max_constant_digits:
            raise self.fail("constant too large", node)
        return result

    def call(self, node: ast.Call) -> tuple[Node, Fraction | None]:
        if not isinstance(node.func, ast.Name):
            what = _REFUSED.get(type(node.func), "an expression")
            raise self.fail(f"only named functions may be called, not {what}", node)
        name = node.func.id
        if name not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise self.fail(f"function {name!r} is not allowed (allowed: {allowed})", node)
        if node.keywords:
            raise self.fail(f"{name}() takes no keyword arguments", node.keywords[0].value)
        lo, hi = FUNCTIONS[name]
        if not lo <= len(node.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            noun = "argument" if want == "1" else "arguments"
            raise self.fail(f"{name}() takes {want} {noun}, got {len(node.args)}", node)
        args = tuple(self.walk(a)[0] for a in node.args)
        return Call(name, args, self.off(node)), None


def parse_formula(text: str, *, limits: Limits = DEFAULT_LIMITS, source: str | None = None) -> Node:
    """Parse formula text into a :mod:`~coursekit.verify.tree` node, or raise FormulaError."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula must be text, not {type(text).__name__}", 0, "", source)
    if len(text) > limits.max_length:
        raise FormulaError(
            f"formula longer than {limits.max_length} characters", limits.max_length, text, source
        )
    for i, ch in enumerate(text):
        if ord(ch) > 127:
            raise FormulaError(
                f"character {ch!r} is not allowed: formulas are ASCII (write alpha for \N{GREEK SMALL LETTER ALPHA})",
                i,
                text,
                source,
            )
        if ch == "\x00":
            raise FormulaError("NUL character in formula", i, text, source)
    flat = text.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    stripped = flat.lstrip()
    lead = len(flat) - len(stripped)
    if not stripped.strip():
        raise FormulaError("empty formula", 0, text, source)
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: not printed
            warnings.simplefilter("ignore")
            tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        col = (exc.offset or 1) - 1
        raise FormulaError(
            f"syntax error: {exc.msg}", lead + max(0, min(col, len(stripped))), text, source
        ) from None
    except (RecursionError, MemoryError, ValueError):
        raise FormulaError("formula too deeply nested", 0, text, source) from None
    count = sum(1 for _ in ast.walk(tree))
    if count > limits.max_nodes:
        raise FormulaError(
            f"formula has {count} nodes, more than the limit of {limits.max_nodes}", 0, text, source
        )
    walker = _Walker(flat, lead, limits, source)
    try:
        node, _ = walker.walk(tree.body)
    except FormulaError as exc:
        exc.text = text
        raise
    except RecursionError:
        raise FormulaError("formula too deeply nested", 0, text, source) from None
    return node


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
        if not name.isidentifier() or name.startswith("_") or not name.isascii():
            errors[name] = FormulaError(
                f"formula name {name!r} is not an identifier", 0, str(text), name
            )
            continue
        if name in FUNCTIONS or name in CONSTANTS:
            errors[name] = FormulaError(f"formula name {name!r} is reserved", 0, str(text), name)
            continue
        try:
            trees[name] = parse_formula(text, limits=limits, source=name)
        except FormulaError as exc:
            errors[name] = exc
    # Cycles and dependencies on broken formulas, by depth-first search.
    visiting, done = 1, 2
    state: dict[str, int] = {}

    def mark(name: str, message: str, dep: str) -> None:
        if name not in errors:
            off = first_offset(trees[name], dep) or 0
            errors[name] = FormulaError(message, off, texts[name], name)

    def visit(root: str) -> None:
        # Iterative: a chain of formulas thousands deep must not exhaust Python's stack.
        path = [root]  # the formulas being visited, outermost first
        pending = [iter(sorted(free_names(trees[root])))]  # each one's deps still to look at
        state[root] = visiting
        while path:
            name = path[-1]
            for dep in pending[-1]:
                if dep in errors and state.get(dep) is None:
                    mark(name, f"uses formula {dep!r}, which has an error", dep)
                elif dep not in trees:
                    continue
                elif state.get(dep) == visiting:
                    cycle = [*path[path.index(dep) :], dep]
                    text = " -> ".join(cycle)
                    for i, member in enumerate(cycle[:-1]):
                        mark(
                            member, f"formulas refer to each other in a cycle: {text}", cycle[i + 1]
                        )
                elif state.get(dep) is None:
                    state[dep] = visiting
                    path.append(dep)
                    pending.append(iter(sorted(free_names(trees[dep]))))
                    break
                elif dep in errors:
                    mark(name, f"uses formula {dep!r}, which has an error", dep)
            else:
                state[name] = done
                path.pop()
                pending.pop()
                if path and name in errors:
                    mark(path[-1], f"uses formula {name!r}, which has an error", name)

    for name in sorted(trees):
        if state.get(name) is None:
            visit(name)
    for name in errors:
        trees.pop(name, None)
    return trees, errors


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


def check_constants(node: Node, *, limits: Limits = DEFAULT_LIMITS, text: str = "") -> None:
    """Refuse constant subexpressions too large to compute (``2^{9^{9}}``) and division by zero.

    The formula walker does this while parsing; this is the same check for trees built elsewhere
    (the LaTeX parser).
    """

    def fold(n: Node) -> Fraction | None:
        if isinstance(n, Num):
            return n.value
        if isinstance(n, Neg):
            v = fold(n.operand)
            return -v if v is not None else None
        if isinstance(n, Call):
            for a in n.args:
                fold(a)
            return None
        if isinstance(n, BinOp):
            lv, rv = fold(n.left), fold(n.right)
            if n.op == "**":
                if rv is None:
                    return None
                if abs(rv) > limits.max_exponent:
                    raise FormulaError(
                        f"exponent {rv} exceeds the limit of {limits.max_exponent}",
                        n.right.offset,
                        text,
                    )
                if lv is None or rv.denominator != 1:
                    return None
                if lv == 0 and rv < 0:
                    raise FormulaError("division by zero", n.offset, text)
                if lv not in (0, 1, -1) and abs(int(rv)) * _digits(lv) > limits.max_constant_digits:
                    raise FormulaError("constant too large", n.offset, text)
                return lv ** int(rv)
            if n.op == "/" and rv == 0:
                raise FormulaError("division by zero", n.right.offset, text)
            if lv is None or rv is None:
                return None
            result = {"+": lv + rv, "-": lv - rv, "*": lv * rv}.get(n.op)
            result = lv / rv if n.op == "/" else result
            if result is not None and _digits(result) > limits.max_constant_digits:
                raise FormulaError("constant too large", n.offset, text)
            return result
        return None

    fold(node)


__all__ = [
    "DEFAULT_LIMITS",
    "FormulaError",
    "Limits",
    "check_constants",
    "expand",
    "node_count",
    "parse_formula",
    "parse_formulas",
]
