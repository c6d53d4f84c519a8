"""The leaves of the LaTeX grammar: atoms (numbers, letters, groups, ``\\frac``, ``\\sqrt``,
``\\left( \\right)``, function macros) and macro arguments.

:class:`Atoms` is the base of :class:`~coursekit.verify.latex.parser._Parser`, which supplies the
rules above the atoms (:meth:`Atoms.expr`, :meth:`Atoms.factor`) that a group or argument recurses
into.
"""

from __future__ import annotations

from fractions import Fraction

from coursekit.verify.latex.tokens import FUNCTION_MACROS, GREEK, OPEN, Tok, TokenCursor, identifier
from coursekit.verify.tree import BinOp, Call, Name, Node, Num


class Atoms(TokenCursor):
    """Parsing of one atom or argument; ``expr`` and ``factor`` come from the full grammar."""

    def expr(self) -> Node:
        raise NotImplementedError  # the grammar's sum rule, defined by the parser

    def factor(self) -> Node:
        raise NotImplementedError  # the grammar's factor rule, defined by the parser

    def argument(self, what: str) -> Node:
        """A macro or script argument: a braced group or a single token (``^2``, ``\\frac12``)."""
        t = self.tok
        if self.is_char("{"):
            self.advance()
            node = self.expr()
            self.expect_char("}")
            return node
        if t.kind == "char" and t.value.isdigit():
            self.advance()
            return Num(Fraction(int(t.value)), t.offset)
        if t.kind == "char" and t.value.isascii() and t.value.isalpha():
            self.advance()
            return Name(t.value, t.offset)
        if t.kind == "cmd" and t.value in GREEK:
            self.advance()
            return Name(GREEK[t.value], t.offset)
        if self.is_cmd("pi"):
            self.advance()
            return Name("pi", t.offset)
        if t.kind == "cmd" and t.value in {"frac", "dfrac", "tfrac", "sqrt"}:
            node, _ = self.atom()
            return node
        if t.kind == "cmd" and t.value in {"top", "intercal", "prime", "dagger", "ast", "star"}:
            raise self.fail(f"\\{t.value} is not supported in a {what} argument", t)
        raise self.fail(f"expected an argument for {what}{self.found()}")

    def atom(self) -> tuple[Node, bool]:
        """Return the atom and whether a subscript may extend its name."""
        t = self.tok
        if t.kind == "char":
            found = self.char_atom(t)
            if found is not None:
                return found
        if t.kind == "text":
            self.advance()
            ident = identifier(t.content)
            if ident is None:
                raise self.fail(
                    f"text {t.content!r} inside an expression (only a whole side may be a label)", t
                )
            return Name(ident, t.offset), True
        if t.kind == "cmd":
            return self.command_atom(t)
        raise self.fail(f"expected an expression{self.found()}", t)

    def char_atom(self, t: Tok) -> tuple[Node, bool] | None:
        """A digit, a letter or a bracketed group; None for any other character."""
        if t.value.isdigit():
            return self.number(), False
        if t.value.isascii() and t.value.isalpha():
            self.advance()
            return Name(t.value, t.offset), True
        if t.value in "([":
            self.advance()
            node = self.expr()
            self.expect_char(OPEN[t.value])
            return node, False
        if t.value == "{":
            self.advance()
            node = self.expr()
            self.expect_char("}")
            return node, False
        return None

    def command_atom(self, t: Tok) -> tuple[Node, bool]:
        """An atom that starts with a command: a Greek letter, pi, a group, a fraction, a root."""
        name = t.value
        if name in GREEK:
            self.advance()
            return Name(GREEK[name], t.offset), True
        if name == "pi":
            self.advance()
            return Name("pi", t.offset), False
        if name == "{":
            self.advance()
            node = self.expr()
            if not self.is_cmd("}"):
                raise self.fail(f"expected '\\}}'{self.found()}")
            self.advance()
            return node, False
        if name == "left":
            return self.left_right(), False
        if name in {"frac", "dfrac", "tfrac"}:
            self.advance()
            num = self.argument(f"\\{name}")
            den = self.argument(f"\\{name}")
            return BinOp("/", num, den, t.offset), False
        if name == "sqrt":
            return self.sqrt(t), False
        if name in FUNCTION_MACROS:
            return self.function(), False
        raise self.fail(f"LaTeX command \\{name} is not supported here", t)

    def sqrt(self, t: Tok) -> Node:
        """``\\sqrt{x}``, or ``\\sqrt[n]{x}`` as ``x**(1/n)``."""
        self.advance()
        index: Node | None = None
        if self.is_char("["):
            self.advance()
            index = self.expr()
            self.expect_char("]")
        radicand = self.argument("\\sqrt")
        if index is None:
            return Call("sqrt", (radicand,), t.offset)
        return BinOp(
            "**", radicand, BinOp("/", Num(Fraction(1), t.offset), index, t.offset), t.offset
        )

    def left_right(self) -> Node:
        t = self.advance()  # \left
        d = self.advance()
        if d.kind == "char" and d.value in "([":
            close = OPEN[d.value]
        elif d.kind == "cmd" and d.value == "{":
            close = "\\}"
        else:
            raise self.fail("only \\left( \\left[ and \\left\\{ are supported", d)
        node = self.expr()
        if not self.is_cmd("right"):
            raise self.fail(f"expected \\right{close}{self.found()}", self.tok)
        self.advance()
        e = self.advance()
        got = e.value if e.kind == "char" else "\\" + e.value
        if got != close:
            raise self.fail(f"\\left{d.value} closed by \\right{got}", e)
        del t
        return node

    def function(self) -> Node:
        t = self.advance()
        func = FUNCTION_MACROS[t.value]
        base: Node | None = None
        if func == "log" and self.is_char("_"):
            self.advance()
            base = self.argument("\\log_")
        if self.is_char("^"):
            raise self.fail(
                f"powers of \\{t.value} are not supported; write (\\{t.value} x)^2", self.tok
            )
        args: list[Node]
        if self.is_char("(") or self.is_cmd("left"):
            if self.is_cmd("left"):
                self.advance()
                d = self.advance()
                if not (d.kind == "char" and d.value == "("):
                    raise self.fail("expected \\left( after a function", d)
                close_cmd = True
            else:
                self.advance()
                close_cmd = False
            args = [self.expr()]
            while self.is_char(","):
                self.advance()
                args.append(self.expr())
            if close_cmd:
                if not self.is_cmd("right"):
                    raise self.fail(f"expected \\right){self.found()}")
                self.advance()
            self.expect_char(")")
        else:
            args = [self.factor()]
        if base is not None:
            args.append(base)
        if func in {"Max", "Min"}:
            if len(args) < 2:
                raise self.fail(f"\\{t.value} needs at least two arguments", t)
        elif len(args) != (2 if base is not None else 1):
            raise self.fail(f"\\{t.value} takes one argument", t)
        return Call(func, tuple(args), t.offset)

    def number(self) -> Node:
        t = self.tok
        digits = ""
        seen_dot = False
        last_end = t.offset
        while True:
            u = self.tok
            if u.kind == "char" and u.value.isdigit() and u.offset == last_end:
                digits += u.value
                last_end = u.offset + 1
                self.advance()
            elif (
                u.kind == "char"
                and u.value == "."
                and not seen_dot
                and u.offset == last_end
                and self.toks[self.i + 1].kind == "char"
                and self.toks[self.i + 1].value.isdigit()
            ):
                seen_dot = True
                digits += "."
                last_end = u.offset + 1
                self.advance()
            elif (
                self.is_char("{")
                and u.offset == last_end
                and self.is_char(",", self.toks[self.i + 1])
                and self.is_char("}", self.toks[self.i + 2])
                and self.toks[self.i + 3].kind == "char"
                and self.toks[self.i + 3].value.isdigit()
            ):
                self.i += 3
                last_end = self.tok.offset
            else:
                break
            if len(digits) > self.limits.max_literal_digits:
                raise self.fail("number too long", t)
        return Num(Fraction(digits), t.offset)
