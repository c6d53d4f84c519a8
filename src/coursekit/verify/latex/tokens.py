"""Reading LaTeX maths into tokens: the closed whitelist of macros, the tokenizer, and a
cursor over the tokens that parsers step through (with the error messages they share).
"""

from __future__ import annotations

from dataclasses import dataclass

from coursekit.verify.expr import FormulaError, Limits

_GREEK_NAMES = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa mu nu xi "
    "omicron rho varrho sigma varsigma tau upsilon phi varphi chi psi omega "
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

TEXT_MACROS = frozenset(
    {
        "text",
        "mathrm",
        "textrm",
        "operatorname",
        "mathit",
        "textit",
        "mathsf",
        "textsf",
        "mathbf",
        "textbf",
    }
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
    }
)
MUL_MACROS = frozenset({"cdot", "times", "ast"})
OPEN = {"(": ")", "[": "]", "\\{": "\\}"}


@dataclass(frozen=True)
class Tok:
    kind: str  # "cmd" | "char" | "text" | "end"
    value: str  # macro name without backslash, the character, or the text macro name
    offset: int
    content: str = ""  # for "text": the raw contents of the braces


def tokenize(text: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch == "~":
            i += 1
            continue
        if ch == "%":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch == "\\":
            j = i + 1
            if j < n and text[j].isalpha():
                while j < n and text[j].isalpha():
                    j += 1
                name = text[i + 1 : j]
                if name in TEXT_MACROS:
                    k = j
                    while k < n and text[k].isspace():
                        k += 1
                    if k >= n or text[k] != "{":
                        raise FormulaError(f"\\{name} needs a {{...}} argument", i, text)
                    depth, m = 1, k + 1
                    while m < n and depth:
                        depth += {"{": 1, "}": -1}.get(text[m], 0)
                        m += 1
                    if depth:
                        raise FormulaError("unbalanced braces", k, text)
                    toks.append(Tok("text", name, i, text[k + 1 : m - 1]))
                    i = m
                    continue
                toks.append(Tok("cmd", name, i))
                i = j
                continue
            if j < n:
                toks.append(Tok("cmd", text[j], i))
                i = j + 1
                continue
            raise FormulaError("lone backslash", i, text)
        toks.append(Tok("char", ch, i))
        i += 1
    # Sentence punctuation closing a display ("... = \\frac{T}{d}.") is not maths.
    while toks and toks[-1].kind == "char" and toks[-1].value in ".,;":
        toks.pop()
    toks.append(Tok("end", "", n))
    return [
        t
        for t in toks
        if not (t.kind == "cmd" and t.value in SPACING)
        and not (t.kind == "char" and t.value == "&")
    ]


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

    # -- token helpers -----------------------------------------------------------------------
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

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

    def found(self) -> str:
        t = self.tok
        if t.kind == "end":
            return ", found the end"
        if t.kind == "cmd":
            return f", found \\{t.value}"
        if t.kind == "text":
            return f", found \\{t.value}{{{t.content}}}"
        return f", found '{t.value}'"
