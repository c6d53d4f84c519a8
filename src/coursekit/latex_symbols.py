"""The symbols a piece of LaTeX uses, found with pylatexenc's walker (never ad-hoc regexes).

What counts as a symbol (the notation rules compare these, `coursekit explain CK204` shows it):

* A **base**: one Latin letter (`T`, `d`; juxtaposed letters are separate symbols, so `QK`
  is `Q` and `K`, as in print), a Greek letter macro (`\\alpha`), a named symbol written with a
  font macro (`\\mathrm{softmax}`, `\\operatorname{softmax}`, `\\mathbb{R}`, `\\mathcal{L}`,
  `\\mathbf{x}`), or an accented letter (`\\hat{p}`).
* A base keeps its **subscript**: `d_k`, `W_{hh}`, `\\alpha_{ij}`, `h_t`, `h_{t-1}` are each read
  as base plus subscript. Whether a subscript names the symbol (`d_k`, `W_{hh}`) or indexes a
  family (`h_t`, `h_{t-1}`, `h_1`, `q_i`) depends on the table in scope, so the rules decide it
  (see `latex_names.is_index`): a subscript is an *index* when it holds only digits, `+ - ,`,
  dots and letters that are themselves declared symbols. An indexed use is covered by a declared member of its
  family with an index subscript (`h_t` covers `h_{t-1}`, `h_1`, `h_T`) or by the bare base.
* A superscript is not part of the symbol: `d_h^2` is `d_h`, and what the superscript holds is
  read as maths in its own right (`\\mathbb{R}^{d_h}` uses `\\mathbb{R}` and `d_h`).

What does not count: numbers; operators and relations (`+ = \\cdot \\sum \\in \\approx \\top`);
delimiters and sizing (`\\left( \\right) \\langle \\lVert`); spacing (`\\, \\quad`); dots;
standard function names (`\\log \\exp \\tanh \\cos \\max`); anything inside `\\text{...}`; and the
`O` of big-O notation (`O(...)`), although what the parentheses hold does count.

Spelling is normalised, so `W_{hh}`, `W_{ hh }` and `W_hh` in a notation table are one symbol.
Inside maths, TeX's own reading applies: `W_hh` subscripts only the first `h`, and the rules
say so when it leads to an undeclared `W_h`.
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache

from pylatexenc.latexwalker import LatexMathNode

from coursekit.latex_macros import ACCENTS, FONTS, GREEK, OPEN_DELIMITERS, SKIP_ARGUMENT
from coursekit.latex_names import formula_name, index_parts, is_index, key_of, shown
from coursekit.latex_tokens import Tok, canonical, tokens, unbrace
from coursekit.latex_tokens import walk as _walk  # by this name, the seam tests patch
from coursekit.markdown import MathSpan, scan
from coursekit.memo import per_text
from coursekit.records import record


@record(frozen=True, slots=True)
class SymbolUse:
    """One symbol where a text uses it. `offset` is into the text that was scanned."""

    base: str  # canonical: 'd', '\\alpha', '\\mathrm{softmax}', '\\hat{p}'
    sub: str  # canonical subscript ('' for none): 'k', 'hh', 't-1', 'ij'
    offset: int
    raw_sub: str = ""  # as written, to explain TeX's reading of `W_hh`
    braced: bool = True  # the subscript was a group (or a single token)
    follows_letter: bool = False  # directly followed by a letter (`W_hh` -> W_h, h)

    @property
    def key(self) -> str:
        return key_of(self.base, self.sub)

    @property
    def sub_letters(self) -> list[str]:
        return index_parts(self.sub)


@record(slots=True)
class _Stream:
    toks: list[Tok]
    index: int = 0
    uses: list[SymbolUse] = field(default_factory=list)


# Reading symbols ---------------------------------------------------------------------------------


def _next_meaningful(stream: _Stream) -> Tok | None:
    while stream.index < len(stream.toks):
        tok = stream.toks[stream.index]
        if not (tok.kind == "char" and tok.text.isspace()):
            return tok
        stream.index += 1
    return None


def _take_argument(stream: _Stream) -> Tok | None:
    tok = _next_meaningful(stream)
    if tok is None:
        return None
    stream.index += 1
    return tok


def _scan(toks: list[Tok] | tuple[Tok, ...], uses: list[SymbolUse]) -> None:
    stream = _Stream(list(toks), 0, uses)
    while stream.index < len(stream.toks):
        tok = stream.toks[stream.index]
        stream.index += 1
        base = _base(tok, stream)
        if base is None:
            if tok.kind == "group":
                _scan(tok.children, uses)
            continue
        _attach_scripts(stream, base, tok.pos)


def _base(tok: Tok, stream: _Stream) -> str | None:
    """The canonical base a token starts, consuming its argument; None for non-symbols."""
    if tok.kind == "char":
        if not (tok.text.isascii() and tok.text.isalpha()):
            return None
        if tok.text == "O":
            following = _next_meaningful(stream)
            if following is not None and following.kind == "char" and following.text == "(":
                return None  # big-O: the O is notation for a bound, its argument is maths
            if (
                following is not None
                and following.kind == "macro"
                and following.text in OPEN_DELIMITERS
            ):
                return None
        return tok.text
    if tok.kind != "macro":
        return None
    name = tok.text
    if name in GREEK:
        return "\\" + name
    if name in FONTS or name in ACCENTS:
        arg = _take_argument(stream)
        if arg is None:
            return None
        inner = unbrace(canonical([arg]))
        return f"\\{name}{{{inner}}}" if inner else None
    if name in SKIP_ARGUMENT:
        _take_argument(stream)
    return None


def _attach_scripts(stream: _Stream, base: str, pos: int) -> None:
    sub = ""
    raw_sub = ""
    braced = True
    superscripts: list[Tok] = []
    while True:
        tok = _next_meaningful(stream)
        if tok is None or tok.kind != "char" or tok.text not in "_^'":
            break
        stream.index += 1
        if tok.text == "'":
            continue
        arg = _take_argument(stream)
        if arg is None:
            break
        if tok.text == "^":
            superscripts.append(arg)
            continue
        raw_sub = canonical([arg])
        braced = arg.kind == "group"
        sub = unbrace(raw_sub)
        # Index letters are uses too (`q_i` uses `i`); whether a subscript is an index is
        # decided against the table in scope, so record them and let the rule filter.
    follows_letter = False
    if sub and not braced:
        after = stream.toks[stream.index] if stream.index < len(stream.toks) else None
        follows_letter = after is not None and after.kind == "char" and after.text.isalpha()
    stream.uses.append(SymbolUse(base, sub, pos, raw_sub, braced, follows_letter))
    # A superscript is maths of its own, read after its base (in reading order).
    _scan(superscripts, stream.uses)


@per_text(8192)
def _read_maths(latex: str) -> tuple[tuple[SymbolUse, ...], str | None]:
    try:
        toks = tokens(_walk("$" + latex.replace("$", " ") + "$"))
    except Exception as exc:  # a walker bug: say so (CK205), never pass it as symbol-free
        return (), _reason(exc)
    uses: list[SymbolUse] = []
    _scan(toks, uses)
    return tuple(
        SymbolUse(u.base, u.sub, max(0, u.offset - 1), u.raw_sub, u.braced, u.follows_letter)
        for u in uses
    ), None


def symbols_in_maths(latex: str) -> tuple[SymbolUse, ...]:
    """Every symbol use in a string that is maths throughout (a notation table's `symbol`)."""
    return _read_maths(latex)[0]


def maths_error(latex: str) -> str | None:
    """Why the walker could not read maths-throughout text, or None when it could."""
    return _read_maths(latex)[1]


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


@lru_cache(maxsize=8192)
def declared_key(symbol: str) -> str | None:
    """The symbol a notation entry declares: its head, if the entry starts with one.

    `d_k` -> `d_{k}`; `W_hh` -> `W_{hh}` (a table names a symbol, so the whole run is the
    subscript); `H(p)` -> `H` (p is a placeholder); `\\langle u, v \\rangle` or `\\tanh` -> None
    (notation for an operator: nothing to check against the maths).
    """
    text = re.sub(r"_([A-Za-z0-9]{2,})(?![A-Za-z0-9])", r"_{\1}", symbol.strip())
    uses = symbols_in_maths(text)
    if not uses:
        return None
    first = uses[0]
    # Only a symbol that the entry *starts* with is declared (not `u` of `\langle u, v\rangle`).
    stripped = text.lstrip()
    lead = stripped[:1]
    if lead == "\\":
        macro = re.match(r"\\([A-Za-z]+)", stripped)
        name = macro.group(1) if macro else ""
        if name not in GREEK and name not in FONTS and name not in ACCENTS:
            return None
    elif not lead.isalpha():
        return None
    return first.key


@lru_cache(maxsize=8192)
def notation_key(symbol: str) -> str | None:
    """What a notation entry names, for telling two entries apart.

    A plain symbol (`d_k`, `W_hh`) is its head key; an entry that writes an expression
    (`H(p)` against `H(p, \\hat{p})`) is the whole expression without spaces and braces, so
    entropy and cross-entropy are two notations even though both start with `H`.
    """
    head = declared_key(symbol)
    if head is None:
        return None
    squeeze = str.maketrans("", "", " {}\t\n")
    if symbol.translate(squeeze) == head.translate(squeeze):
        return head
    return symbol.translate(squeeze)


# Markdown ----------------------------------------------------------------------------------------


@record(frozen=True, slots=True)
class _Maths:
    span: MathSpan
    uses: tuple[SymbolUse, ...]
    error: str | None = None  # why the walker could not read the span (its symbols are unknown)


@record(frozen=True, slots=True)
class UnreadableMaths:
    """A span of maths whose symbols could not be read: reported (CK205), never skipped."""

    offset: int  # of the span's opening `$`
    latex: str
    reason: str


@per_text(4096)
def _maths_of(markdown: str) -> tuple[_Maths, ...]:
    """The maths of a Markdown text, each span walked once per distinct text among the last
    4,096 (a run's notation rules share each chapter's walk: `rules.notation.chapter_maths`).

    Only the spans are walked, never the prose around them: walking whole lessons made the
    notation rules the slowest part of a check.
    """
    scanned = scan(markdown)
    found: list[_Maths] = []
    for span in scanned.maths:
        uses: list[SymbolUse] = []
        error: str | None = None
        try:
            for node in _walk(markdown[span.start : span.end]):
                if isinstance(node, LatexMathNode):
                    _scan(tokens(list(node.nodelist or [])), uses)
        except Exception as exc:  # a walker bug must not pass the span as symbol-free
            uses, error = [], _reason(exc)
        shifted = tuple(
            SymbolUse(u.base, u.sub, u.offset + span.start, u.raw_sub, u.braced, u.follows_letter)
            for u in uses
        )
        found.append(_Maths(span, shifted, error))
    return tuple(found)


def math_spans(markdown: str) -> list[MathSpan]:
    """The `$...$` and `$$...$$` spans of a Markdown text, in order."""
    return list(scan(markdown).maths)


def symbols_in_markdown(markdown: str) -> list[SymbolUse]:
    """Every symbol used in the maths of a Markdown text, offsets into that text."""
    return [use for maths in _maths_of(markdown) for use in maths.uses]


def unreadable_maths(markdown: str) -> list[UnreadableMaths]:
    """The spans whose symbols could not be read, with the reason."""
    return [
        UnreadableMaths(m.span.start, markdown[m.span.start : m.span.end], m.error)
        for m in _maths_of(markdown)
        if m.error is not None
    ]


# The spelling of a symbol (`latex_names`) is read beside its uses, so it is offered here too.
__all__ = [
    "SymbolUse",
    "UnreadableMaths",
    "declared_key",
    "formula_name",
    "index_parts",
    "is_index",
    "key_of",
    "math_spans",
    "maths_error",
    "notation_key",
    "shown",
    "symbols_in_markdown",
    "symbols_in_maths",
    "unreadable_maths",
]
