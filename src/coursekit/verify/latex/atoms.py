"""The leaves of the LaTeX grammar: numbers, letters, styled and accented symbols, groups,
delimited pairs (``\\left( \\right)``, norms, ``|x|``, floors) and macro arguments.

:class:`Atoms` is the base of the grammar's other layers (:mod:`.operators`, :mod:`.calls`, :mod:`.scripts`,
:mod:`.parser`); the rules above the atoms (:meth:`Atoms.expr`, :meth:`Atoms.factor`,
:meth:`Atoms.operator_atom`) are supplied by them.
"""

from __future__ import annotations

from fractions import Fraction

from coursekit.latex_macros import ACCENT_PREFIX, STYLE_PREFIX, styled_name
from coursekit.records import record
from coursekit.verify.latex.tokens import GREEK, OPEN, Tok, TokenCursor, identifier
from coursekit.verify.tree import Call, Name, Node, Num


@record(frozen=True)
class Info:
    """What an atom was, for deciding what a following ``_``, ``^`` or ``(`` means."""

    kind: str  # "letter" | "greek" | "styled" | "text" | "number" | "group" | "call"
    head: str = ""  # the letter, the Greek name, or the style ("mathbf", "hat", ...)

    @property
    def nameable(self) -> bool:
        return self.kind in {"letter", "greek", "styled", "text"}

    @property
    def bold(self) -> bool:
        return self.kind == "styled" and self.head in {"mathbf", "boldsymbol"}


GROUP = Info("group")
PROSE_WORDS = frozenset(
    [
        "if",
        "for",
        "where",
        "and",
        "or",
        "otherwise",
        "with",
        "when",
        "else",
        "all",
        "such",
        "that",
        "then",
        "of",
        "is",
        "as",
        "at",
        "in",
        "on",
        "to",
        "vs",
        "s.t.",
        "subject",
        "given",
    ]
)
CALL = Info("call")

# Delimited pairs read as one call: opener -> (closer, function).
PAIRS: dict[str, tuple[str, str]] = {
    "|": ("|", "Norm"),
    "lVert": ("rVert", "Norm"),
    "Vert": ("Vert", "Norm"),
    "lvert": ("rvert", "Abs"),
    "lfloor": ("rfloor", "floor"),
    "lceil": ("rceil", "ceiling"),
}


class Atoms(TokenCursor):
    """Parsing of one atom or argument; the rules above come from the full grammar."""

    def expr(self) -> Node:
        raise NotImplementedError  # the grammar's sum rule, defined by the parser

    def factor(self) -> Node:
        raise NotImplementedError  # the grammar's factor rule, defined by the scripts layer

    def operator_atom(self, t: Tok) -> tuple[Node, Info] | None:
        raise NotImplementedError  # \frac, \sqrt, \sum, functions: the operators layer

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
        if t.kind == "cmd" and (t.value in GREEK or t.value in STYLE_PREFIX | ACCENT_PREFIX):
            node, _ = self.atom()
            return node
        if self.is_cmd("pi"):
            self.advance()
            return Name("pi", t.offset)
        if t.kind == "cmd" and t.value in {"frac", "dfrac", "tfrac", "sqrt"}:
            node, _ = self.atom()
            return node
        if t.kind == "cmd":
            raise self.fail(f"\\{t.value} is not supported as an argument of {what}", t)
        raise self.fail(f"expected an argument for {what}{self.found()}")

    def atom(self) -> tuple[Node, Info]:
        t = self.tok
        if t.kind == "char":
            found = self.char_atom(t)
            if found is not None:
                return found
        if t.kind == "text":
            self.advance()
            ident = identifier(t.content)
            if t.content != t.content.strip() or t.content.strip().lower() in PROSE_WORDS:
                raise self.fail(f"prose \\{t.value}{{{t.content}}} inside the maths", t)
            if ident is None:
                raise self.fail(
                    f"text {t.content!r} inside an expression (only a whole side may be a label)", t
                )
            return Name(ident, t.offset), Info("text", ident)
        if t.kind == "cmd":
            return self.command_atom(t)
        raise self.fail(f"expected an expression{self.found()}", t)

    def char_atom(self, t: Tok) -> tuple[Node, Info] | None:
        """A digit, a letter, a bracketed group or ``|x|``; None for any other character."""
        if t.value.isdigit():
            return self.number(), Info("number")
        if t.value.isascii() and t.value.isalpha():
            self.refuse_letter_run(t)
            self.advance()
            return Name(t.value, t.offset), Info("letter", t.value)
        if t.value in "([{":
            return self.group(t), GROUP
        if t.value == "|":
            return self.delimited(t, "|", "|", "Abs"), CALL
        return None

    def refuse_letter_run(self, t: Tok) -> None:
        """``pos``, ``FFN`` or ``PE_i`` are names printed in italics, not products of letters."""
        run = [t]
        k = self.i + 1
        while True:
            u = self.toks[k]
            prev = run[-1]
            if not (u.kind == "char" and u.value.isascii() and u.value.isalpha()):
                break
            if u.offset != prev.offset + 1:
                break
            run.append(u)
            k += 1
        word = "".join(u.value for u in run)
        after = self.toks[k]
        # Two capitals before `_`/`(` name one thing (PE_t), unless the second is a weight
        # matrix W, conventionally a factor of its own (QW_i^Q, XW_{xh}).
        named = len(run) >= 3 or (
            len(run) == 2
            and word.isupper()
            and word[1] != "W"
            and after.kind == "char"
            and after.value in "_("
        )
        if named:
            raise self.fail(
                f"the letters '{word}' run together: write \\mathrm{{{word}}} for a name, "
                "or space the symbols of a product",
                t,
            )

    def group(self, t: Tok) -> Node:
        self.advance()
        saved = self.abs_depth, self.dims
        self.abs_depth, self.dims = 0, False
        node = self.expr()
        if t.value == "[" and (self.is_char(",") or self.is_char(";")):
            parts = [node]
            while self.is_char(",") or self.is_char(";"):
                self.advance()
                parts.append(self.expr())
            node = Call("Concat", tuple(parts), t.offset)  # [h_{t-1}, x_t], [h_f; h_b]
        if t.value == "(" and self.is_char(","):
            raise self.fail("(…, …) (a tuple or an interval) is not supported", t)
        self.expect_char(OPEN.get(t.value, "}"))
        self.abs_depth, self.dims = saved
        return node

    def command_atom(self, t: Tok) -> tuple[Node, Info]:
        """An atom that starts with a command."""
        name = t.value
        if name in GREEK:
            self.advance()
            return Name(GREEK[name], t.offset), Info("greek", GREEK[name])
        if name == "pi":
            self.advance()
            return Name("pi", t.offset), Info("number")
        if name == "{":
            self.advance()
            node = self.expr()
            if not self.is_cmd("}"):
                raise self.fail(f"expected '\\}}'{self.found()}")
            self.advance()
            return node, GROUP
        if name in STYLE_PREFIX or name in ACCENT_PREFIX:
            return self.styled(t)
        if name in PAIRS:
            close, func = PAIRS[name]
            return self.delimited(t, name, close, func), CALL
        if name == "left":
            return self.left_right()
        found = self.operator_atom(t)
        if found is not None:
            return found
        raise self.fail(f"LaTeX command \\{name} is not supported here", t)

    # -- styled and accented symbols -----------------------------------------------------------
    def styled(self, t: Tok) -> tuple[Node, Info]:
        """``\\mathbf{W}``, ``\\mathbf W``, ``\\mathbf{W_q}``, ``\\hat{y}``: one distinct name."""
        self.advance()
        prefix = STYLE_PREFIX.get(t.value) or ACCENT_PREFIX[t.value]
        if prefix == "mathbb" and self.styled_letter() in {"E", "P"}:
            raise self.fail(f"\\mathbb{{{self.styled_letter()}}} (expectation or probability)", t)
        braced = self.is_char("{")
        if braced:
            self.advance()
        inner = self.tok
        self.inner_start, self.inner_brace = inner.offset, self.i - 1
        if inner.kind == "char" and inner.value.isascii() and inner.value.isalnum():
            self.advance()
            name = inner.value
        elif inner.kind == "cmd" and inner.value in GREEK:
            self.advance()
            name = GREEK[inner.value]
        elif inner.kind == "cmd" and (inner.value in STYLE_PREFIX or inner.value in ACCENT_PREFIX):
            node, _ = self.styled(inner)
            assert isinstance(node, Name)
            name = node.id
        else:
            raise self.fail(f"\\{t.value}{{…}} applied to {self.applied_to(braced)}", t)
        if braced and self.is_char("_"):
            name = self.inner_subscript(name, t)
        if braced and not self.is_char("}"):
            raise self.fail(f"\\{t.value}{{…}} applied to {self.applied_to(braced)}", t)
        if braced:
            self.advance()
        return Name(styled_name(prefix, name), t.offset), Info("styled", prefix)

    def styled_letter(self) -> str:
        t = self.toks[self.i + 1] if self.is_char("{") else self.tok
        return t.value if t.kind == "char" else ""

    def inner_subscript(self, name: str, t: Tok) -> str:
        raise NotImplementedError  # `\mathbf{W_q}`: the scripts layer reads the subscript

    def applied_to(self, braced: bool) -> str:
        """The LaTeX a style was applied to, for the message refusing it."""
        start = self.inner_start
        if not braced:
            return self.text[start : start + 12].strip() or "nothing"
        end = self.at(self.close_of(self.inner_brace)).offset
        return self.text[start:end].strip() or "nothing"

    # -- delimited pairs -------------------------------------------------------------------------
    def delimited(self, t: Tok, opener: str, close: str, func: str) -> Node:
        """``|x|``, ``\\|x\\|_2``, ``\\lVert x \\rVert``, ``\\lfloor x \\rfloor``."""
        self.advance()
        saved = self.abs_depth, self.norm_depth, self.dims
        bar = opener == "|" and t.kind == "char"
        self.abs_depth, self.norm_depth = self.abs_depth + bar, self.norm_depth + (not bar)
        self.dims = False
        node = self.expr()
        self.abs_depth, self.norm_depth, self.dims = saved
        closing = self.is_char(close) if opener == "|" and t.kind == "char" else self.is_cmd(close)
        if not closing and bar:
            raise self.fail(
                "'|' without its closing '|' (a conditional bar, as in p(y | x), is not supported)",
                t,
            )
        if not closing:
            shown = opener if t.kind == "char" else "\\" + opener
            raise self.fail(
                f"'{shown}' without its closing '{shown if opener == close else close}'", t
            )
        self.advance()
        return self.with_norm_index(Call(func, (node,), t.offset), func)

    def with_norm_index(self, node: Call, func: str) -> Node:
        """``\\|x\\|_2``: the norm's index is its second argument."""
        if func != "Norm" or not self.is_char("_"):
            return node
        self.advance()
        return Call(func, (node.args[0], self.argument("a norm's index")), node.offset)

    def left_right(self) -> tuple[Node, Info]:
        """``\\left( … \\right)`` and the delimited pairs written with ``\\left``/``\\right``."""
        t = self.advance()  # \left
        d = self.advance()
        opener = d.value if d.kind == "char" else "\\" + d.value
        closers = {"(": ")", "[": "]", "\\{": "\\}", "|": "|", "\\|": "\\|"}
        closers.update({"\\lVert": "\\rVert", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"})
        if opener not in closers:
            raise self.fail(f"\\left{opener} is not supported", d)
        saved = self.abs_depth, self.dims
        self.abs_depth, self.dims = 0, False
        node = self.expr()
        if opener == "[" and (self.is_char(",") or self.is_char(";")):
            parts = [node]
            while self.is_char(",") or self.is_char(";"):
                self.advance()
                parts.append(self.expr())
            node = Call("Concat", tuple(parts), d.offset)
        self.abs_depth, self.dims = saved
        if not self.is_cmd("right"):
            raise self.fail(f"expected \\right{closers[opener]}{self.found()}", self.tok)
        self.advance()
        e = self.advance()
        got = e.value if e.kind == "char" else "\\" + e.value
        if got != closers[opener]:
            raise self.fail(f"\\left{opener} closed by \\right{got}", e)
        func = {"|": "Abs", "\\|": "Norm", "\\lVert": "Norm", "\\lfloor": "floor"}.get(opener)
        func = func or {"\\lceil": "ceiling"}.get(opener)
        if func is None:
            return node, GROUP
        del t
        return self.with_norm_index(Call(func, (node,), d.offset), func), CALL

    def refuse_scientific(self, digits: str, end: int, t: Tok) -> None:
        """``1e-4`` is code's spelling of a number, not ``1 * e - 4``."""
        after = self.peek()
        if (
            self.is_char("e")
            and self.tok.offset == end
            and after.offset == end + 1
            and after.kind == "char"
            and (after.value in "+-" or after.value.isdigit())
        ):
            raise self.fail(f"{digits}e… (scientific notation): write {digits} \\times 10^{{…}}", t)

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
                and self.peek().kind == "char"
                and self.peek().value.isdigit()
            ):
                seen_dot = True
                digits += "."
                last_end = u.offset + 1
                self.advance()
            elif (
                self.is_char("{")
                and u.offset == last_end
                and self.is_char(",", self.peek(1))
                and self.is_char("}", self.peek(2))
                and self.peek(3).kind == "char"
                and self.peek(3).value.isdigit()
            ):
                self.i += 3
                last_end = self.tok.offset
            else:
                break
            if len(digits) > self.limits.max_literal_digits:
                raise self.fail("number too long", t)
        self.refuse_scientific(digits, last_end, t)
        return Num(Fraction(digits), t.offset)
