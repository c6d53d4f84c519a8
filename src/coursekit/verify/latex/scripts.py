r"""What follows an atom: subscripts (a name ``d_k``, ``W_{hh}`` or an index ``h_{t-1}``,
``p_{i,2j}``), superscripts (a power, a transpose ``^\top``, a label ``H^{(0)}``, ``W^Q``, an
ordinal ``i^{\text{th}}``) and applications ``f(x)``, ``\alpha(\mathbf q, \mathbf k)``, ``O(T^2)``.

When a superscript or a parenthesis could be read two ways (``K^T``: transpose or power of T;
``L(\theta)``: a function's value or a product), the reading is refused with the construct named
rather than guessed.
"""

from __future__ import annotations

from itertools import pairwise

from coursekit.latex_macros import STYLE_PREFIX
from coursekit.records import record
from coursekit.verify.latex.atoms import CALL, Info
from coursekit.verify.latex.calls import Calls
from coursekit.verify.latex.tokens import GREEK, Tok, identifier
from coursekit.verify.tree import BinOp, Call, Name, Node

ORDINALS = frozenset({"th", "st", "nd", "rd"})
TRANSPOSE_MACROS = frozenset({"top", "intercal", "T"})
LABEL_LETTERS = frozenset("QKVO")  # W^Q, W^K, W^V, W^O: the projections of attention


@record(frozen=True)
class Script:
    kind: str  # "power" | "transpose" | "label" | "ordinal" | "T" | "upper"
    node: Node | None
    tok: Tok


class Scripts(Calls):
    """The factor rule: an atom, its scripts, then (:class:`Calls`) an application."""

    def factor(self) -> Node:
        base, info = self.atom()
        sub: tuple[str | list[Node], Tok] | None = None
        sup: Script | None = None
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
                sup = self.superscript(t)
        if sub is not None:
            base = self.with_subscript(base, info, *sub)
        if sup is not None:
            return self.with_superscript(base, info, sup, subscripted=sub is not None)
        if sub is None:
            self.refuse_operator_symbol(base, info)
        return self.application(base, info)

    def refuse_operator_symbol(self, base: Node, info: Info) -> None:
        """``\\Delta W``, ``\\delta x``, ``\\mathrm{d}t``: a change or a differential, not a product."""
        operator = (info.kind == "greek" and info.head in {"Delta", "delta"}) or (
            info.kind == "text" and info.head == "d"
        )
        u = self.tok
        follows = (u.kind == "char" and u.value.isascii() and u.value.isalpha()) or (
            u.kind == "cmd" and (u.value in GREEK or u.value in STYLE_PREFIX)
        )
        if operator and follows and isinstance(base, Name):
            shown = self.source(base.offset, u.offset + 1)
            raise self.fail(f"{shown}… (a change or a differential, or a product?)", u)

    # -- subscripts ----------------------------------------------------------------------------
    def subscript(self) -> str | list[Node]:
        """A name suffix (``k``, ``hh``, ``ij``, ``model``) or the indices of ``h_{t-1}``."""
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
        if not self.is_char("{"):
            raise self.fail(f"expected a subscript{self.found()}")
        name = self.simple_subscript()
        if name is not None:
            return name
        self.advance()
        if self.is_char("}"):
            raise self.fail("empty subscript", t)
        return self.indices(t)

    def simple_subscript(self) -> str | None:
        """``{hh}``, ``{ij}``, ``{10}``, ``{\\text{model}}``: letters or digits that name."""
        parts: list[str] = []
        kinds: list[str] = []
        k = self.i + 1
        while not self.is_char("}", self.toks[k]):
            u = self.toks[k]
            if u.kind == "char" and u.value.isascii() and u.value.isalnum():
                parts.append(u.value)
                kinds.append("digit" if u.value.isdigit() else "letter")
            elif u.kind == "cmd" and (u.value in GREEK or u.value in {"max", "min"}):
                parts.append(GREEK.get(u.value, u.value))
                kinds.append("letter")
            elif u.kind == "text" and identifier(u.content):
                parts.append(identifier(u.content) or "")
                kinds.append("letter")
            else:
                return None
            k += 1
        # A digit before a letter is arithmetic (`p_{2j}` indexes by 2j), not a name.
        if not parts or any(a == "digit" and b == "letter" for a, b in pairwise(kinds)):
            return None
        self.i = k + 1
        return "".join(parts)

    def indices(self, t: Tok) -> list[Node]:
        """The comma-separated indices of ``p_{i,2j}`` or ``PE_{(pos, 2i)}``."""
        paren = self.is_char("(")
        if paren:
            self.advance()
        out = [self.expr()]
        while self.is_char(","):
            self.advance()
            out.append(self.expr())
        if paren:
            self.expect_char(")")
        if not self.is_char("}"):
            raise self.fail(f"a subscript holding {self.found()[len(', found ') :]}", t)
        self.advance()
        return out

    def with_subscript(self, base: Node, info: Info, sub: str | list[Node], t: Tok) -> Node:
        if not (info.nameable and isinstance(base, Name)):
            raise self.fail("a subscript must follow a letter or a name, not (…)_{…}", t)
        if isinstance(sub, str):
            return Name(f"{base.id}_{sub}", base.offset)
        return Call("Indexed", (base, *sub), base.offset)

    def inner_subscript(self, name: str, t: Tok) -> str:
        """``\\mathbf{W_q}`` is ``\\mathbf{W}_q``; an index inside the style is refused."""
        self.advance()
        sub = self.subscript()
        if not isinstance(sub, str):
            raise self.fail(
                f"\\{t.value}{{…}} around an indexed symbol: write the index outside", t
            )
        return f"{name}_{sub}"

    # -- superscripts --------------------------------------------------------------------------
    def superscript(self, t: Tok) -> Script:
        u = self.tok
        if u.kind == "cmd" and u.value in TRANSPOSE_MACROS - {"T"}:
            self.advance()
            return Script("transpose", None, t)
        if u.kind in {"cmd", "char"} and u.value in {"prime", "ast", "star", "*", "dagger"}:
            raise self.fail(f"the superscript {self.source(u.offset, self.peek().offset)}", u)
        if u.kind == "text":
            self.advance()
            return self.text_script(u, t)
        if u.kind == "char" and u.value.isascii() and u.value.isupper():
            self.advance()
            return Script("T" if u.value == "T" else "upper", Name(u.value, u.offset), t)
        if self.is_char("{"):
            found = self.braced_script(t)
            if found is not None:
                return found
        return Script("power", self.argument("^"), t)

    def text_script(self, u: Tok, t: Tok) -> Script:
        content = u.content.strip()
        if content in ORDINALS:
            return Script("ordinal", None, t)
        if content == "T" and u.value in {"mathsf", "mathrm", "textsf"}:
            return Script("transpose", None, t)
        ident = identifier(content)
        if ident is None:
            raise self.fail(f"superscript text {content!r} is not an identifier", u)
        return Script("label", Name(ident, u.offset), t)

    def braced_script(self, t: Tok) -> Script | None:
        """``^{\\top}``, ``^{\\text{th}}``, ``^{th}``, ``^{(0)}``, ``^{T}``; None for a power."""
        first, second = self.peek(1), self.peek(2)
        closes = self.is_char("}", second)
        if closes and first.kind in {"cmd", "text", "char"}:
            if first.kind == "cmd" and first.value in TRANSPOSE_MACROS - {"T"}:
                self.i += 3
                return Script("transpose", None, t)
            if first.kind == "text":
                self.i += 2
                script = self.text_script(first, t)
                self.advance()
                return script
            if first.kind == "char" and first.value.isascii() and first.value.isupper():
                self.i += 3
                return Script("T" if first.value == "T" else "upper", Name(first.value, 0), t)
        word = "".join(u.value for u in self.toks[self.i + 1 : self.i + 3])
        if word in ORDINALS and self.is_char("}", self.peek(3)):
            self.i += 4
            return Script("ordinal", None, t)
        capitals = self.capital_word()
        if capitals is not None:  # y^{LS}, W^{QK}: a label made of capitals, not L*S
            return Script("label", capitals, t)
        if self.is_char("<", first):
            self.i += 2  # x^{<t>}: the time step, as a label
            node = self.expr()
            self.expect_char(">")
            self.expect_char("}")
            return Script("label", node, t)
        if self.is_char("(", first) and self.label_in_parentheses():
            self.advance()
            self.advance()
            named = self.label_word()
            node = named if named is not None else self.expr()
            self.expect_char(")")
            self.expect_char("}")
            return Script("label", node, t)
        return None

    def capital_word(self) -> Node | None:
        """``{LS}`` (at the ``{``): two or more capitals and nothing else, consumed; else None."""
        k = self.i + 1
        while self.toks[k].kind == "char" and self.toks[k].value.isascii():
            if not self.toks[k].value.isupper():
                break
            k += 1
        if k - self.i - 1 < 2 or not self.is_char("}", self.toks[k]):
            return None
        word = "".join(u.value for u in self.toks[self.i + 1 : k])
        node = Name(word, self.toks[self.i + 1].offset)
        self.i = k + 1
        return node

    def label_word(self) -> Node | None:
        """``W^{(hh)}``: letters in a label are its name, not a product (``(t-1)`` is maths)."""
        parts: list[str] = []
        k = self.i
        while not self.is_char(")", self.toks[k]):
            u = self.toks[k]
            if not (u.kind == "char" and u.value.isascii() and u.value.isalpha()):
                return None
            parts.append(u.value)
            k += 1
        if len(parts) < 2:
            return None
        first = self.tok
        self.i = k
        return Name("".join(parts), first.offset)

    def label_in_parentheses(self) -> bool:
        """Is the braced superscript exactly one parenthesised group (``^{(t-1)}``)?"""
        k = self.close_of(self.i + 1, "(", ")")
        return self.is_char(")", self.at(k)) and self.is_char("}", self.at(k + 1))

    def with_superscript(self, base: Node, info: Info, sup: Script, *, subscripted: bool) -> Node:
        shown = self.source(base.offset)
        if sup.kind == "transpose" or (sup.kind == "T" and info.bold):
            node: Node = Call("transpose", (base,), sup.tok.offset)
        elif sup.kind == "ordinal":
            node = Call("Ordinal", (base,), base.offset)
        elif sup.kind in {"label", "upper"} and info.kind == "number":
            assert sup.node is not None
            node = BinOp("**", base, sup.node, base.offset)
        elif self.is_label_script(sup, base, info):
            assert sup.node is not None
            node = Call("Label", (base, sup.node), base.offset)
        elif sup.kind == "T" and info.kind != "number":
            raise self.fail(
                f"{shown} could be a transpose or a power of T: write ^\\top for a transpose",
                sup.tok,
            )
        elif sup.kind == "upper":
            raise self.fail(
                f"{shown}: a power or a label? write ^{{(…)}} or ^{{\\text{{…}}}}", sup.tok
            )
        else:
            assert sup.node is not None
            node = self.power(base, info, sup.node, subscripted=subscripted)
        if sup.kind == "power":
            if self.opens_call() and self.names_a_function(base, info):
                raise self.fail(f"{shown}(…): a power of a function, its inverse, or a product?")
            return node
        if self.is_char("(") and not isinstance(node, BinOp):
            raise self.fail(f"{shown}(…) after a superscript label is not supported")
        return node

    def is_label_script(self, sup: Script, base: Node, info: Info) -> bool:
        if sup.kind == "label" or (sup.kind == "upper" and self.is_label_letter(sup, info)):
            return True
        return sup.kind == "power" and self.labels_a_vector(base, info, sup.node)

    def labels_a_vector(self, base: Node, info: Info, exponent: Node | None) -> bool:
        """``\\mathbf{h}_t^{f}``: a letter on a bold lower-case vector names it (no vector powers)."""
        if not (info.bold and isinstance(base, Name) and isinstance(exponent, Name)):
            return False
        letter = base.id.split("_", 2)[1][:1]
        return letter.islower() and exponent.id.isalpha() and len(exponent.id) == 1

    def is_label_letter(self, sup: Script, info: Info) -> bool:
        return info.nameable and isinstance(sup.node, Name) and sup.node.id in LABEL_LETTERS

    def power(self, base: Node, info: Info, exponent: Node, *, subscripted: bool) -> Node:
        """``x^2``; ``e^{x}`` is the exponential (``e`` alone, never ``e_{ij}``)."""
        if isinstance(base, Name) and base.id.startswith("mathbb_"):
            raise self.fail(f"a space {self.source(base.offset)} outside a statement '… \\in …'")
        euler = info.kind in {"letter", "text"} and isinstance(base, Name) and base.id == "e"
        if euler and not subscripted:
            return Call("exp", (exponent,), base.offset)
        return BinOp("**", base, exponent, base.offset)

    def after_call(self, call: Call) -> Node:
        """``f(x)^2``, ``\\sigma(z)^\\top``, ``\\mathrm{softmax}(x)_i`` (a component of the value)."""
        if self.is_char("^"):
            t = self.advance()
            return self.with_superscript(call, CALL, self.superscript(t), subscripted=False)
        if not self.is_char("_"):
            return call
        t = self.advance()
        sub = self.subscript()
        index = [Name(sub, t.offset + 1)] if isinstance(sub, str) else sub
        return Call("Indexed", (call, *index), call.offset)
