"""Formulas in Python syntax, parsed by a whitelisting walk over Python's ``ast``.

An author declares each derived formula once, e.g. ``recurrence: T*(d_h**2 + d_h*d_x)`` or
``ratio: grid / recurrence``.  The text is handed to :func:`ast.parse` (which only *parses*) and the
resulting tree is walked with an explicit whitelist:

* numbers (``int`` and decimal literals, kept exact as fractions; no complex, no strings, no bools);
* names (ASCII identifiers not starting with ``_``); ``pi`` is the constant, every other name is a
  symbol or, if declared, another formula;
* ``+ - * / **``, unary minus and plus;
* calls ``f(x, ...)`` where ``f`` is one of :data:`~coursekit.verify.tree.FUNCTIONS`, positional
  arguments only;
* the suffix ``.T`` (``K.T``), the transpose of a matrix, read as ``transpose(K)``.

Everything else -- any other attribute access, subscripts, lambdas, comprehensions, comparisons, keyword
arguments, ``^`` -- is a :class:`FormulaError` carrying a message and the character offset of the
offending construct.  Caps bound the text length, the node count, the size of numeric literals and
of constant exponents (``9**9**9`` is refused before anything is computed).  Nothing is ever
evaluated with ``eval``, ``sympify`` or ``parse_expr``.

Declared formulas may use each other; :mod:`coursekit.verify.declared` substitutes them and
:mod:`coursekit.verify.symbolic` builds the sympy expression; this module never imports sympy.
"""

from __future__ import annotations

import ast
import warnings
from fractions import Fraction
from typing import Any

from coursekit.records import record
from coursekit.verify.tree import (
    FUNCTIONS,
    BinaryOp,
    BinOp,
    Call,
    Name,
    Neg,
    Node,
    Num,
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


@record(frozen=True)
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


class _FoldError(Exception):
    """A constant subexpression refused; ``at_right`` places it at the right operand."""

    def __init__(self, message: str, at_right: bool):
        super().__init__(message)
        self.message = message
        self.at_right = at_right


def fold_constant(
    op: str, lv: Fraction | None, rv: Fraction | None, limits: Limits
) -> Fraction | None:
    """The value of ``lv op rv`` when both sides are constant, refusing results too large to hold.

    Shared by the formula walker and :func:`check_constants` so both front ends refuse the same
    things with the same words.
    """
    if op == "**":
        if rv is None:
            return None
        if abs(rv) > limits.max_exponent:
            raise _FoldError(f"exponent {rv} exceeds the limit of {limits.max_exponent}", True)
        if lv is None or rv.denominator != 1:
            return None
        if lv == 0 and rv < 0:
            raise _FoldError("division by zero", False)
        if lv not in (0, 1, -1) and abs(int(rv)) * _digits(lv) > limits.max_constant_digits:
            raise _FoldError("constant too large", False)
        return lv ** int(rv)
    if op == "/" and rv == 0:
        raise _FoldError("division by zero", True)
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
        raise _FoldError("constant too large", False)
    return result


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
        if isinstance(node, ast.Attribute) and node.attr == "T":
            # `K.T` is the transpose of K, as in numpy: the one attribute a formula may use.
            operand, _ = self.walk(node.value)
            return Call("transpose", (operand,), self.off(node)), None
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
        try:
            return fold_constant(op, lv, rv, self.limits)
        except _FoldError as exc:
            raise self.fail(exc.message, node.right if exc.at_right else node) from None

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
            try:
                return fold_constant(n.op, lv, rv, limits)
            except _FoldError as exc:
                where = n.right.offset if exc.at_right else n.offset
                raise FormulaError(exc.message, where, text) from None
        return None

    fold(node)


__all__ = [
    "DEFAULT_LIMITS",
    "FormulaError",
    "Limits",
    "check_constants",
    "node_count",
    "parse_formula",
]
