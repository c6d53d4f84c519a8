"""Operators written as macros: ``\\frac`` (and derivatives ``\\frac{\\partial L}{\\partial h}``),
``\\sqrt``, ``\\sum``/``\\prod`` with bounds, ``\\nabla``, and the named functions (``\\exp``,
``\\log_2``, ``\\tanh``, ``\\max``).
"""

from __future__ import annotations

from fractions import Fraction

from coursekit.verify.latex.atoms import CALL, Atoms, Info
from coursekit.verify.latex.tokens import FUNCTION_MACROS, GREEK, Tok
from coursekit.verify.tree import BinOp, Call, Name, Node, Num

FRACTIONS = frozenset({"frac", "dfrac", "tfrac"})
BIG_OPERATORS = {"sum": "Sum", "prod": "Product"}


class Operators(Atoms):
    """Atoms that are operators applied to what follows or to their arguments."""

    def term(self) -> Node:
        raise NotImplementedError  # the grammar's product-with-operators rule (the parser)

    def operator_atom(self, t: Tok) -> tuple[Node, Info] | None:
        name = t.value
        if name in FRACTIONS:
            return self.fraction(t), Info("group")
        if name == "sqrt":
            return self.sqrt(t), CALL
        if name in FUNCTION_MACROS:
            return self.function(), CALL
        if name in BIG_OPERATORS:
            return self.big_operator(t), CALL
        if name == "nabla":
            return self.gradient(t), CALL
        if name == "partial":
            raise self.fail(
                "\\partial outside \\frac{\\partial …}{\\partial …} is not supported", t
            )
        return None

    # -- fractions and derivatives -------------------------------------------------------------
    def fraction(self, t: Tok) -> Node:
        self.advance()
        if self.is_char("{") and self.derivative_mark(self.peek()) is not None:
            return self.derivative(t)
        self.refuse_ambiguous_d(t)
        num = self.argument(f"\\{t.value}")
        den = self.argument(f"\\{t.value}")
        return BinOp("/", num, den, t.offset)

    def derivative_mark(self, u: Tok) -> str | None:
        """``\\partial`` or an upright ``\\mathrm{d}`` opening a derivative's numerator."""
        if self.is_cmd("partial", u):
            return "\\partial"
        if u.kind == "text" and u.content.strip() == "d":
            return f"\\{u.value}{{d}}"
        return None

    def refuse_ambiguous_d(self, t: Tok) -> None:
        """``\\frac{dy}{dx}``: a derivative or a quotient of products with ``d``? Say so."""
        if not (self.is_char("{") and self.is_char("d", self.peek())):
            return
        k = self.close_of(self.i)
        if (
            self.is_char("{", self.at(k + 1))
            and self.is_char("d", self.at(k + 2))
            and self.at(k + 3).kind in {"char", "cmd"}
            and not self.is_char("}", self.at(k + 3))
        ):
            raise self.fail(
                "\\frac{d…}{d…} could be a derivative or a quotient: write \\mathrm{d} "
                "for a derivative",
                t,
            )

    def derivative(self, t: Tok) -> Node:
        """``\\frac{\\partial L}{\\partial W}`` -> ``Derivative(L, W)``."""
        self.expect_char("{")
        mark = self.derivative_mark(self.advance())
        if self.is_char("^"):
            raise self.fail(f"a higher derivative ({mark}^…) is not supported", self.tok)
        if self.is_char("}"):
            raise self.fail(f"\\frac{{{mark}}}{{{mark} …}} applied to what follows", t)
        body = self.expr()
        self.expect_char("}")
        self.expect_char("{")
        if self.derivative_mark(self.tok) != mark:
            raise self.fail(f"expected {mark} in the derivative's denominator{self.found()}")
        self.advance()
        var = self.factor()
        if isinstance(var, Call) and var.func not in {"Indexed", "Label"}:
            raise self.fail(
                f"a derivative with respect to {self.source(var.offset)} is not supported", t
            )
        if not isinstance(var, Name | Call):
            raise self.fail(
                f"a derivative with respect to {self.source(var.offset)} is not supported", t
            )
        self.expect_char("}")
        return Call("Derivative", (body, var), t.offset)

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

    # -- sums, products, gradients ----------------------------------------------------------------
    def big_operator(self, t: Tok) -> Node:
        r"""``\sum_{i=1}^{n} x_i`` -> ``Sum(x_i, i, 1, n)``; ``\sum_j a_j`` -> ``Sum(a_j, j)``.

        The body runs to the next ``+`` or ``-`` at the same level, as a reader reads it.
        """
        self.advance()
        func = BIG_OPERATORS[t.value]
        if not self.is_char("_"):
            raise self.fail(f"\\{t.value} without an index (\\{t.value}_{{i=1}}^{{n}})", t)
        self.advance()
        bounds = self.index_and_start(t)
        if self.is_char("^"):
            self.advance()
            if len(bounds) == 1:
                raise self.fail(f"\\{t.value} with an upper bound but no start", t)
            bounds.append(self.argument(f"\\{t.value}^"))
        if self.tok.kind == "end" or self.is_char("}") or self.is_char("="):
            raise self.fail(f"\\{t.value} with nothing to add up{self.found()}", t)
        body = self.term()
        return Call(func, (body, *bounds), t.offset)

    def index_and_start(self, t: Tok) -> list[Node]:
        """``_j``, ``_{j}`` or ``_{i=1}``: the index variable and, when given, where it starts."""
        u = self.tok
        if u.kind == "char" and u.value.isascii() and u.value.isalpha():
            self.advance()
            return [Name(u.value, u.offset)]
        if u.kind == "cmd" and u.value in GREEK:
            self.advance()
            return [Name(GREEK[u.value], u.offset)]
        self.expect_char("{")
        v = self.advance()
        if v.kind == "char" and v.value.isascii() and v.value.isalpha():
            var = Name(v.value, v.offset)
        elif v.kind == "cmd" and v.value in GREEK:
            var = Name(GREEK[v.value], v.offset)
        else:
            raise self.fail(f"\\{t.value}_{{…}} needs an index letter first", v)
        if self.is_char("}"):
            self.advance()
            return [var]
        if not self.is_char("="):
            raise self.fail(f"\\{t.value}_{{…}} over a condition is not supported", t)
        self.advance()
        start = self.expr()
        self.expect_char("}")
        return [var, start]

    def gradient(self, t: Tok) -> Node:
        r"""``\nabla_\theta L`` -> ``Gradient(L, theta)``; ``\nabla L`` -> ``Gradient(L)``."""
        self.advance()
        wrt: list[Node] = []
        if self.is_char("_"):
            self.advance()
            wrt.append(self.argument("\\nabla_"))
        if self.tok.kind == "end" or self.is_char("}") or self.is_char("="):
            raise self.fail(f"\\nabla with nothing to differentiate{self.found()}", t)
        return Call("Gradient", (self.factor(), *wrt), t.offset)

    # -- named functions ----------------------------------------------------------------------
    def function(self) -> Node:
        t = self.advance()
        func = FUNCTION_MACROS[t.value]
        base: Node | None = None
        if self.is_char("_"):
            if func != "log":
                raise self.fail(f"\\{t.value}_{{…}} (over an index) is not supported", t)
            self.advance()
            base = self.argument("\\log_")
        if self.is_char("^"):
            raise self.fail(
                f"powers of \\{t.value} are not supported; write (\\{t.value} x)^2", self.tok
            )
        if self.is_char("(") or (self.is_cmd("left") and self.is_char("(", self.peek())):
            args = self.call_arguments()
        else:
            args = [self.factor()]
            self.refuse_open_argument(t)
        if base is not None:
            args.append(base)
        if func in {"Max", "Min"}:
            if len(args) < 2:
                raise self.fail(f"\\{t.value} needs at least two arguments", t)
        elif len(args) != (2 if base is not None else 1):
            raise self.fail(f"\\{t.value} takes one argument", t)
        call = Call(func, tuple(args), t.offset)
        if self.is_char("^"):  # \tanh(x)^2: only after parentheses (\tanh^2 x is refused above)
            self.advance()
            return BinOp("**", call, self.argument("^"), t.offset)
        return call

    def refuse_open_argument(self, t: Tok) -> None:
        r"""``\sin \omega t``: sin(omega t) or sin(omega) t? Without parentheses, refuse."""
        u = self.tok
        if not self.starts_factor() or (u.kind == "cmd" and u.value in FUNCTION_MACROS):
            return  # `\sin a \cos b`: the next function ends the argument, as read
        shown = self.source(t.offset, u.offset)
        raise self.fail(
            f"\\{t.value} applied to a product? {shown} … is followed by more factors: "
            f"write \\{t.value}(…)",
            t,
        )

    def starts_factor(self) -> bool:
        raise NotImplementedError  # the grammar's product rule decides (the parser)

    def call_arguments(self) -> list[Node]:
        """``(a, b; c)`` or ``\\left( a, b \\right)``: the arguments of an application."""
        left = self.is_cmd("left")
        if left:
            self.advance()
        self.expect_char("(")
        saved = self.abs_depth, self.dims
        self.abs_depth, self.dims = 0, False
        args = [self.expr()]
        while self.is_char(",") or self.is_char(";"):
            self.advance()
            args.append(self.expr())
        self.abs_depth, self.dims = saved
        if self.is_cmd("mid") or self.is_char("|"):
            raise self.fail("a conditional bar '|' (as in p(y | x)) is not supported")
        if left:
            self.expect_cmd("right")
        self.expect_char(")")
        return args
