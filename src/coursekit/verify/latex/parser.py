"""The recursive-descent grammar of the LaTeX maths subset (see :mod:`coursekit.verify.latex`),
producing :mod:`coursekit.verify.tree` nodes with exact offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from coursekit.verify.latex.atoms import Atoms
from coursekit.verify.latex.tokens import (
    FUNCTION_MACROS,
    GREEK,
    MUL_MACROS,
    Tok,
    identifier,
)
from coursekit.verify.tree import BinOp, Name, Neg, Node


@dataclass(frozen=True)
class Side:
    """One side of an ``=`` chain: an expression, or a label (``node is None``)."""

    node: Node | None
    offset: int
    source: str


class _Parser(Atoms):
    """The grammar: one method per rule, each consuming tokens and returning a tree node."""

    def sides(self) -> list[Side]:
        out: list[Side] = []
        while True:
            start = self.tok.offset
            if self.is_label():
                out.append(Side(None, start, self.text[start : self.tok.offset].strip()))
            else:
                node = self.expr()
                out.append(Side(node, start, self.text[start : self.tok.offset].strip()))
            if self.is_char("="):
                self.advance()
                continue
            if self.tok.kind != "end":
                t = self.tok
                if t.kind == "cmd" and t.value in {
                    "approx",
                    "le",
                    "leq",
                    "ge",
                    "geq",
                    "ne",
                    "neq",
                    "sim",
                    "propto",
                }:
                    raise self.fail(f"relation \\{t.value} is not checked: only '=' chains are")
                if t.kind == "char" and t.value in "<>":
                    raise self.fail(f"relation '{t.value}' is not checked: only '=' chains are")
                if self.is_char("}") or self.is_char(")") or self.is_char("]"):
                    raise self.fail(f"unbalanced '{t.value}'")
                raise self.fail(f"unexpected {self.found()[len(', found ') :]}")
            return out

    def is_label(self) -> bool:
        """A side made only of a text macro (optionally with a subscript), ending at '=' or end."""
        j = self.i
        if self.toks[j].kind != "text":
            return False
        j += 1
        if self.is_char("_", self.toks[j]):
            j += 1
            if self.is_char("{", self.toks[j]):
                depth = 0
                while self.toks[j].kind != "end":
                    if self.is_char("{", self.toks[j]):
                        depth += 1
                    elif self.is_char("}", self.toks[j]):
                        depth -= 1
                        if depth == 0:
                            j += 1
                            break
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
        return node

    def term(self) -> Node:
        node = self.product()
        while True:
            t = self.tok
            if self.is_char("*") or (t.kind == "cmd" and t.value in MUL_MACROS):
                self.advance()
                node = BinOp("*", node, self.signed_product(), t.offset)
            elif self.is_char("/") or self.is_cmd("div"):
                self.advance()
                node = BinOp("/", node, self.signed_product(), t.offset)
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
            return (t.value.isalnum() and t.value.isascii()) or t.value in "([{"
        if t.kind == "text":
            return True
        if t.kind == "cmd":
            return (
                t.value in GREEK
                or t.value in FUNCTION_MACROS
                or t.value in {"frac", "dfrac", "tfrac", "sqrt", "left", "pi", "{"}
            )
        return False

    def product(self) -> Node:
        if not self.starts_factor():
            t = self.tok
            if t.kind == "cmd" and t.value not in MUL_MACROS | {"div", "right", "}"}:
                raise self.fail(f"LaTeX command \\{t.value} is not supported here")
            raise self.fail(f"expected an expression{self.found()}")
        node = self.factor()
        while self.starts_factor():
            t = self.tok
            node = BinOp("*", node, self.factor(), t.offset)
        return node

    def factor(self) -> Node:
        start = self.tok
        base, nameable = self.atom()
        sub: tuple[str, Tok] | None = None
        sup: Node | None = None
        while self.is_char("_") or self.is_char("^") or self.is_char("'"):
            t = self.advance()
            if t.value == "'":
                raise self.fail("primes are not supported; name the symbol with a subscript", t)
            if t.value == "_":
                if sub is not None:
                    raise self.fail("double subscript", t)
                sub = (self.subscript(), t)
            else:
                if sup is not None:
                    raise self.fail("double superscript", t)
                sup = self.argument("^")
        if sub is not None:
            if not (nameable and isinstance(base, Name)):
                raise self.fail("a subscript must follow a letter or a name", sub[1])
            base = Name(f"{base.id}_{sub[0]}", base.offset)
        if sup is not None:
            base = BinOp("**", base, sup, start.offset)
        return base

    def subscript(self) -> str:
        t = self.tok
        if t.kind == "char" and t.value.isascii() and t.value.isalnum():
            self.advance()
            return t.value
        if t.kind == "cmd" and t.value in GREEK:
            self.advance()
            return GREEK[t.value]
        if t.kind == "text":
            self.advance()
            ident = identifier(t.content)
            if ident is None:
                raise self.fail(f"subscript text {t.content!r} is not an identifier", t)
            return ident
        if self.is_char("{"):
            self.advance()
            parts: list[str] = []
            while not self.is_char("}"):
                u = self.tok
                if u.kind == "char" and u.value.isascii() and u.value.isalnum():
                    parts.append(u.value)
                elif u.kind == "cmd" and u.value in GREEK:
                    parts.append(GREEK[u.value])
                elif u.kind == "text" and identifier(u.content):
                    parts.append(identifier(u.content) or "")
                elif u.kind == "end":
                    raise self.fail("unbalanced '{' in subscript", t)
                else:
                    raise self.fail(
                        "a subscript may hold only letters, digits and Greek letters", u
                    )
                self.advance()
            self.advance()
            if not parts:
                raise self.fail("empty subscript", t)
            return "".join(parts)
        raise self.fail(f"expected a subscript{self.found()}")
