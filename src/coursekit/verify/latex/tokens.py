"""Reading LaTeX maths into tokens: the closed whitelist of macros, the tokenizer, and a
cursor over the tokens that parsers step through (with the error messages they share).
"""

from __future__ import annotations

from typing import Any

from coursekit.records import record
from coursekit.verify.expr import FormulaError, Limits

_GREEK_NAMES = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa mu nu xi "
    "omicron rho varrho sigma varsigma tau upsilon phi varphi chi psi omega ell "
    "Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega"
)
GREEK: dict[str, str] = {name: name for name in _GREEK_NAMES.split(" ")}
GREEK["lambda"] = "lamda"

FUNCTION_MACROS: dict[str, str] = {
    "exp": "exp",
    "log": "log",
    "ln": "ln",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "max": "Max",
    "min": "Min",
}

# Their braced argument is a name (`\mathrm{grid}` is the formula `grid`) or prose.
TEXT_MACROS = frozenset(
    {"text", "mathrm", "textrm", "operatorname", "mathit", "textit", "mathsf", "textsf", "textup"}
)
SPACING = frozenset(
    {
        ",",
        ";",
        ":",
        "!",
        ">",
        " ",
        "quad",
        "qquad",
        "displaystyle",
        "textstyle",
        "scriptstyle",
        "limits",
        "nolimits",
        "nonumber",
        "notag",
        "big",
        "Big",
        "bigg",
        "Bigg",
        "bigl",
        "bigr",
        "Bigl",
        "Bigr",
        "biggl",
        "biggr",
        "Biggl",
        "Biggr",
        "bigm",
        "Bigm",
    }
)
# Environments whose lines are one chain of relations (`&` aligns, `\\` breaks a line).
CHAIN_ENVIRONMENTS = frozenset(
    {"aligned", "align", "align*", "split", "equation", "equation*", "gather", "gather*"}
)
# Macros whose braced argument is a cross-reference, never maths.
DROP_ARGUMENT = frozenset({"label", "tag", "eqref", "ref"})
MUL_MACROS = frozenset({"cdot", "times", "ast"})
OPEN = {"(": ")", "[": "]", "\\{": "\\}"}


@record(frozen=True)
class Tok:
    kind: str  # "cmd" | "char" | "text" | "end"
    value: str  # macro name without backslash, the character, or the text macro name
    offset: int
    content: str = ""  # for "text": the raw contents of the braces


def _braced(text: str, i: int, what: str) -> int:
    """The index just past the `{...}` group starting at or after ``i`` (spaces skipped)."""
    n = len(text)
    k = i
    while k < n and text[k].isspace():
        k += 1
    if k >= n or text[k] != "{":
        raise FormulaError(f"\\{what} needs a {{...}} argument", i, text)
    depth, m = 1, k + 1
    while m < n and depth:
        if text[m] == "\\":
            m += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[m], 0)
        m += 1
    if depth:
        raise FormulaError("unbalanced braces", k, text)
    return m


def _macro(text: str, i: int, toks: list[Tok]) -> int:
    """Read the macro at ``text[i] == '\\'``; return where reading goes on."""
    n = len(text)
    j = i + 1
    if j < n and text[j].isalpha():
        while j < n and text[j].isalpha():
            j += 1
        name = text[i + 1 : j]
        if name in TEXT_MACROS:
            k = j
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k].isascii() and text[k].isalnum():  # `\mathsf T`, `\mathrm d`
                toks.append(Tok("text", name, i, text[k]))
                return k + 1
            m = _braced(text, j, name)
            start = text.index("{", j)
            toks.append(Tok("text", name, i, text[start + 1 : m - 1]))
            return m
        if name in DROP_ARGUMENT:
            return _braced(text, j, name)
        if name in {"begin", "end"}:
            m = _braced(text, j, name)
            env = text[text.index("{", j) + 1 : m - 1].strip()
            if env not in CHAIN_ENVIRONMENTS:
                raise FormulaError(f"\\begin{{{env}}} is not supported", i, text)
            return m
        toks.append(Tok("cmd", name, i))
        return j
    if j < n:
        toks.append(Tok("cmd", text[j], i))
        return j + 1
    raise FormulaError("lone backslash", i, text)


# Unicode a text may use for what LaTeX spells with a macro; any other non-ASCII character is
# refused by name (`'²'` is not a digit here, nor `'α'` a guess at \alpha's spelling).
UNICODE: dict[str, tuple[str, str]] = {
    "\u2212": ("char", "-"),
    "\u00d7": ("cmd", "times"),
    "\u00b7": ("cmd", "cdot"),
    "\u22c5": ("cmd", "cdot"),
    "\u2264": ("cmd", "le"),
    "\u2265": ("cmd", "ge"),
    "\u2248": ("cmd", "approx"),
    "\u2260": ("cmd", "neq"),
    "\u2299": ("cmd", "odot"),
}


def _unicode(ch: str, i: int, text: str) -> Tok:
    if ch.isspace():
        return Tok("cmd", " ", i)  # a no-break or thin space: spacing
    found = UNICODE.get(ch)
    if found is None:
        raise FormulaError(f"the character {ch!r} is not supported: write it in LaTeX", i, text)
    return Tok(found[0], found[1], i)


def tokenize(text: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch == "~":
            i += 1
        elif ch == "%":
            while i < n and text[i] != "\n":
                i += 1
        elif ch == "\\":
            i = _macro(text, i, toks)
        elif not ch.isascii():
            toks.append(_unicode(ch, i, text))
            i += 1
        else:
            toks.append(Tok("char", ch, i))
            i += 1
    # Sentence punctuation closing a display ("... = \\frac{T}{d}.") is not maths; nor is a
    # line break closing an aligned block.
    while toks and (
        (toks[-1].kind == "char" and toks[-1].value in ".,;")
        or (toks[-1].kind == "cmd" and toks[-1].value == "\\")
    ):
        toks.pop()
    toks.append(Tok("end", "", n))
    kept = [
        t
        for t in toks
        if not (t.kind == "cmd" and t.value in SPACING)
        and not (t.kind == "char" and t.value == "&")
    ]
    return _join_lines(kept, text)


# What may open the next line of an aligned chain: a relation or an operator continuing the line.
_CONTINUES = frozenset("=<>+-*/")
_CONTINUE_MACROS = frozenset(
    {"le", "leq", "ge", "geq", "approx", "propto", "ne", "neq", "cdot", "times", "in", "odot"}
)


def _join_lines(toks: list[Tok], text: str) -> list[Tok]:
    """Drop line breaks (``\\\\``) between the lines of one chain; refuse a second equation."""
    out: list[Tok] = []
    for k, t in enumerate(toks):
        if not (t.kind == "cmd" and t.value == "\\"):
            out.append(t)
            continue
        nxt = toks[k + 1]
        continues = (nxt.kind == "char" and nxt.value in _CONTINUES) or (
            nxt.kind == "cmd" and nxt.value in _CONTINUE_MACROS
        )
        if not continues and out:
            raise FormulaError(
                "a line break (\\\\) starting a new equation: only one chain per display is read",
                t.offset,
                text,
            )
    return out


_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def identifier(content: str) -> str | None:
    s = content.strip()
    if s and (s[0].isalpha() and s.isascii()) and all(c in _IDENT_CHARS for c in s):
        return s
    return None


class TokenCursor:
    """A position in the tokens of one LaTeX text, with look-ahead and error helpers."""

    def __init__(self, text: str, limits: Limits):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.limits = limits
        self.functions: frozenset[str] = frozenset()
        self.abs_depth = 0  # inside |...| (or call arguments), a '|' closes rather than opens
        self.norm_depth = 0  # inside \|...\|, a '\|' closes
        self.dims = False  # reading the dimensions of \mathbb{R}^{a \times b}
        self.inner_start = 0  # where the argument of the style being read starts
        self.inner_brace = 0  # the index of its `{`
        self.trials: dict[tuple[int, int], list[Any] | None] = {}  # arguments read ahead

    # -- token helpers -----------------------------------------------------------------------
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.at(self.i + k)

    def at(self, k: int) -> Tok:
        """The token at index ``k``, or the end token past it (look-ahead never overruns)."""
        return self.toks[min(k, len(self.toks) - 1)]

    def close_of(self, k: int, opener: str = "{", closer: str = "}") -> int:
        """The index of the character closing the group opened at ``k``, or of the end token."""
        depth = 0
        while self.at(k).kind != "end":
            if self.is_char(opener, self.at(k)):
                depth += 1
            elif self.is_char(closer, self.at(k)):
                depth -= 1
                if depth == 0:
                    return k
            k += 1
        return len(self.toks) - 1

    def advance(self) -> Tok:
        t = self.toks[self.i]
        if t.kind != "end":
            self.i += 1
        return t

    def fail(self, message: str, tok: Tok | None = None) -> FormulaError:
        return FormulaError(message, (tok or self.tok).offset, self.text)

    def is_char(self, value: str, tok: Tok | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "char" and t.value == value

    def is_cmd(self, value: str, tok: Tok | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "cmd" and t.value == value

    def expect_char(self, value: str) -> Tok:
        if not self.is_char(value):
            raise self.fail(f"expected '{value}'{self.found()}")
        return self.advance()

    def expect_cmd(self, value: str) -> Tok:
        if not self.is_cmd(value):
            raise self.fail(f"expected '\\{value}'{self.found()}")
        return self.advance()

    def found(self) -> str:
        t = self.tok
        if t.kind == "end":
            return ", found the end"
        if t.kind == "cmd":
            return f", found \\{t.value}"
        if t.kind == "text":
            return f", found \\{t.value}{{{t.content}}}"
        return f", found '{t.value}'"

    def source(self, start: int, end: int | None = None) -> str:
        """The LaTeX from offset ``start`` up to the current token (for naming a construct)."""
        stop = self.tok.offset if end is None else end
        return self.text[start:stop].strip()
