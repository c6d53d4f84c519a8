"""The recursive-descent grammar of the LaTeX maths subset (see :mod:`coursekit.verify.latex`),
producing :mod:`coursekit.verify.tree` nodes with exact offsets: sums and products here, a
statement's sides and relations (``=``, ``<``, ``\\le``, ``\\in \\mathbb{R}^{a \\times b}``).
"""

from __future__ import annotations

from coursekit.latex_macros import ACCENT_PREFIX, STYLE_PREFIX
from coursekit.records import record
from coursekit.verify.latex.atoms import PAIRS
from coursekit.verify.latex.operators import BIG_OPERATORS
from coursekit.verify.latex.scripts import Scripts
from coursekit.verify.latex.tokens import FUNCTION_MACROS, GREEK, MUL_MACROS
from coursekit.verify.tree import BinOp, Call, Neg, Node, Num

RELATION_CHARS = {"=": "=", "<": "<", ">": ">"}
RELATION_MACROS = {
    "le": "\\le",
    "leq": "\\le",
    "leqslant": "\\le",
    "ge": "\\ge",
    "geq": "\\ge",
    "geqslant": "\\ge",
    "approx": "\\approx",
    "propto": "\\propto",
    "ne": "\\neq",
    "neq": "\\neq",
    "ll": "\\ll",
    "gg": "\\gg",
    "in": "\\in",
    "coloneqq": "=",
    "triangleq": "=",
}
SPACES = frozenset("RNZC")
_FACTOR_MACROS = frozenset(
    {"frac", "dfrac", "tfrac", "sqrt", "left", "pi", "{", "nabla", "partial", *BIG_OPERATORS}
)


@record(frozen=True)
class Side:
    """One side of a chain of relations: an expression, or a label (``node is None``).

    ``relation`` joins it to the side before (``""`` for the first side): ``=``, ``<``, ``>``,
    ``\\le``, ``\\ge``, ``\\approx``, ``\\propto``, ``\\neq``, ``\\ll``, ``\\gg`` or ``\\in``.
    A ``\\in`` side is a space, not an expression: ``space`` is its letter (``R``) and ``shape``
    the dimensions of ``\\mathbb{R}^{a \\times b}`` (``()`` for ``\\mathbb{R}``).
    """

    node: Node | None
    offset: int
    source: str
    relation: str = ""
    space: str | None = None
    shape: tuple[Node, ...] | None = None


class _Parser(Scripts):
    """The grammar: one method per rule, each consuming tokens and returning a tree node."""

    def sides(self) -> list[Side]:
        out: list[Side] = []
        relation = ""
        while True:
            start = self.tok.offset
            if relation == "\\in":
                out.append(self.membership(start))
            elif self.is_label():
                out.append(Side(None, start, self.source(start), relation))
            else:
                node = self.expr()
                out.append(Side(node, start, self.source(start), relation))
            found = self.relation()
            if found is None:
                return out
            relation = found

    def relation(self) -> str | None:
        """The relation after a side (consumed), or None at the end; anything else is refused."""
        t = self.tok
        if t.kind == "end":
            return None
        if t.kind == "char" and t.value in RELATION_CHARS:
            self.advance()
            return RELATION_CHARS[t.value]
        if self.is_char(":") and self.is_char("=", self.peek()):
            self.i += 2
            return "="
        if t.kind == "cmd" and t.value in RELATION_MACROS:
            self.advance()
            return RELATION_MACROS[t.value]
        if self.is_char("}") or self.is_char(")") or self.is_char("]"):
            raise self.fail(f"unbalanced '{t.value}'")
        if self.is_char(","):
            raise self.fail("a list separated by ',' is not supported: one statement per display")
        if t.kind == "cmd":
            raise self.fail(f"LaTeX command \\{t.value} is not supported here")
        raise self.fail(f"unexpected {self.found()[len(', found ') :]}")

    def membership(self, start: int) -> Side:
        """``\\in \\mathbb{R}^{n \\times d}``: the space and its shape."""
        if not self.is_cmd("mathbb"):
            raise self.fail(
                f"membership in {self.found()[len(', found ') :]} is not supported: only "
                "\\in \\mathbb{R}^{…}"
            )
        self.advance()
        braced = self.is_char("{")
        if braced:
            self.advance()
        letter = self.advance()
        if not (letter.kind == "char" and letter.value in SPACES):
            raise self.fail("membership in \\mathbb{…} other than R, N, Z or C", letter)
        if braced:
            self.expect_char("}")
        if self.is_char("_"):
            raise self.fail("a restricted space \\mathbb{R}_{…} is not supported")
        shape: tuple[Node, ...] = ()
        if self.is_char("^"):
            self.advance()
            shape = self.dimensions()
        return Side(None, start, self.source(start), "\\in", letter.value, shape)

    def dimensions(self) -> tuple[Node, ...]:
        if not self.is_char("{"):
            return (self.argument("\\mathbb{R}^"),)
        self.advance()
        saved = self.dims
        self.dims = True
        dims = [self.expr()]
        while self.is_cmd("times"):
            self.advance()
            dims.append(self.expr())
        self.dims = saved
        self.expect_char("}")
        return tuple(dims)

    def is_label(self) -> bool:
        """A side made only of a text macro (optionally with a subscript), ending a side."""
        j = self.i
        if self.toks[j].kind != "text":
            return False
        j += 1
        if self.is_char("_", self.toks[j]):
            j += 1
            if self.is_char("{", self.toks[j]):
                j = self.close_of(j)
                if self.toks[j].kind == "end":  # unbalanced: let expr() say so
                    return False
                j += 1
            elif self.toks[j].kind == "end":  # a dangling '_': let expr() say what is missing
                return False
            else:
                j += 1
        end = self.toks[j]
        if end.kind == "end" or self.is_char("=", end):
            self.i = j
            return True
        return False

    def expr(self) -> Node:
        start = self.tok
        if self.is_cmd("pm") or self.is_cmd("mp"):
            raise self.fail(f"\\{start.value} (two values at once) is not supported")
        if self.is_char("-") or self.is_char("+"):
            neg = self.advance().value == "-"
            first = self.term()
            node: Node = Neg(first, start.offset) if neg else first
        else:
            node = self.term()
        while self.is_char("+") or self.is_char("-"):
            op = self.advance()
            rhs = self.term()
            node = BinOp("+" if op.value == "+" else "-", node, rhs, op.offset)
        if self.is_cmd("pm") or self.is_cmd("mp"):
            raise self.fail(f"\\{self.tok.value} (two values at once) is not supported")
        return node

    def term(self) -> Node:
        node = self.product()
        while True:
            t = self.tok
            if self.dims and self.is_cmd("times"):
                return node  # \mathbb{R}^{a \times b}: the times separates dimensions
            if self.is_char("*") or (t.kind == "cmd" and t.value in MUL_MACROS):
                self.advance()
                node = BinOp("*", node, self.signed_product(), t.offset)
            elif self.is_char("/") or self.is_cmd("div"):
                self.advance()
                node = BinOp("/", node, self.signed_product(), t.offset)
            elif self.is_cmd("odot"):
                self.advance()
                node = Call("Hadamard", (node, self.signed_product()), t.offset)
            else:
                return node

    def signed_product(self) -> Node:
        if self.is_char("-"):
            t = self.advance()
            return Neg(self.signed_product(), t.offset)
        return self.product()

    def starts_factor(self) -> bool:
        t = self.tok
        if t.kind == "char":
            if t.value == "|":
                return self.abs_depth == 0
            return (t.value.isalnum() and t.value.isascii()) or t.value in "([{"
        if t.kind == "text":
            return True
        if t.kind != "cmd":
            return False
        if t.value == "|":
            return self.norm_depth == 0
        return (
            t.value in GREEK
            or t.value in FUNCTION_MACROS
            or t.value in _FACTOR_MACROS
            or t.value in STYLE_PREFIX
            or t.value in ACCENT_PREFIX
            or t.value in PAIRS
        )

    def product(self) -> Node:
        if not self.starts_factor():
            t = self.tok
            if t.kind == "cmd" and t.value not in MUL_MACROS | {"div", "right", "}", "odot"}:
                raise self.fail(f"LaTeX command \\{t.value} is not supported here")
            raise self.fail(f"expected an expression{self.found()}")
        node = self.factor()
        last = node
        while self.starts_factor():
            t = self.tok
            if isinstance(last, Num) and t.kind == "char" and t.value.isdigit():
                raise self.fail(
                    f"two numbers side by side ({self.source(last.offset, t.offset + 1)}…): "
                    "write 262{,}144 for one number or \\cdot for a product",
                    t,
                )
            last = self.factor()
            node = BinOp("*", node, last, t.offset)
        return node
