"""Notation (CK2xx): one meaning per symbol, every declared symbol used, every used symbol declared.

What counts as a symbol, and how `W_{hh}` / `W_hh` / `h_{t-1}` are compared, is documented in
`coursekit.latex_symbols`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from coursekit.diagnostics import Severity
from coursekit.latex_names import is_index, shown
from coursekit.latex_symbols import (
    SymbolUse,
    UnreadableMaths,
    declared_key,
    maths_error,
    symbols_in_markdown,
    unreadable_maths,
)
from coursekit.model.documents import NotationEntry
from coursekit.model.tree import Chapter, Course
from coursekit.records import record
from coursekit.rules._broken import book0_did_not_load, chapter_incomplete
from coursekit.rules._declarations import (
    Declaration,
    Declared,
    every_shared,
    notation_tables,
    resolved,
    table,
)
from coursekit.rules._texts import Text, chapter_texts
from coursekit.rules.apparatus import book0_paths
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.facts import INHERITED_NOTATION


@rule("CK201", "symbol-meaning-conflict")
def symbol_meaning_conflict(ctx: Context) -> Iterator[Finding]:
    """A symbol is declared with a second meaning elsewhere, without `local: true`.

    A symbol has one meaning course-wide. A chapter that deliberately uses it for something
    else says so with `local: true` on its entry; otherwise every declaration of the symbol
    with a different meaning is reported, each naming another. Spelling does not matter:
    `W_{hh}` and `W_hh` are one symbol; meanings are compared ignoring case and spacing.

    Fails:
        # I/2-the-vanilla-rnn/chapter.yaml
        notation: [{symbol: d, meaning: width of the state}]
        # II/2-from-recurrence-to-attention/chapter.yaml
        notation: [{symbol: d, meaning: model width}]
    Passes:
        # II/2-from-recurrence-to-attention/chapter.yaml
        notation: [{symbol: d, meaning: model width, local: true}]
    """
    by_key: dict[str, list[tuple[Declared, str]]] = {}
    for shared in every_shared(ctx.course):
        by_key.setdefault(shared[0].key, []).append(shared)
    # Every side of a conflict is reported, so that naming either file (pre-commit passes only
    # the changed ones) still shows it.
    for group in by_key.values():
        first_of: dict[str, Declared] = {}
        for declared, meaning in group:
            first_of.setdefault(meaning, declared)
        if len(first_of) < 2:
            continue
        for declared, meaning in group:
            decl = resolved(declared)
            other = resolved(next(d for m, d in first_of.items() if m != meaning))
            yield Finding(
                decl.location,
                f"'{decl.entry.symbol}' also means \"{other.entry.meaning}\" "
                f"({other.owner}, {other.location.path}:{other.location.line}); give it one "
                "meaning, or mark the chapter's entry `local: true`",
            )


@rule("CK202", "symbol-declared-twice", per_chapter=(), course_part=True)
def symbol_declared_twice(ctx: Context) -> Iterator[Finding]:
    """One notation table declares the same symbol twice.

    Fails:
        notation:
          - {symbol: W_{hh}, meaning: recurrent weights}
          - {symbol: W_hh, meaning: the recurrent matrix}
    Passes:
        notation:
          - {symbol: W_{hh}, meaning: recurrent weights}
    """
    tables = notation_tables(ctx.course, frozenset(c.id for c in ctx.chapters()))
    for entries, owner in tables:
        if not ctx.course_part and not owner.startswith("chapter "):
            continue  # course.yaml's and the apparatus tables: the course-wide part
        seen: dict[str, Declaration] = {}
        for decl in table(entries, owner):
            if decl.key in seen:
                yield Finding(
                    decl.location,
                    f"'{decl.entry.symbol}' is already declared in this table "
                    f"(line {seen[decl.key].location.line}); keep one entry",
                )
            seen.setdefault(decl.key, decl)


@record(frozen=True, slots=True)
class Scope:
    keys: frozenset[str]
    singles: frozenset[str]  # declared one-letter (or Greek) symbols: the possible indices
    families: frozenset[str]  # bases that may be indexed: `h` from `h_t`, or a bare `x`

    def covers(self, use: SymbolUse) -> bool:
        if use.key in self.keys:
            return True
        return is_index(use.sub, self.singles) and use.base in self.families


def scope_of(course: Course, chapter: Chapter) -> Scope:
    """What a chapter's maths may use: its table, the apparatus it links, course.yaml."""
    entries: list[NotationEntry] = list(course.manifest.notation) if course.manifest else []
    apparatus = course.apparatus
    for link in chapter.manifest.apparatus:
        if link.id in apparatus:
            entries += apparatus[link.id].notation
    entries += chapter.manifest.notation
    keys = {key for entry in entries if (key := declared_key(entry.symbol)) is not None}
    singles = frozenset(key for key in keys if "_" not in key and not key.startswith("\\math"))
    families: set[str] = set()
    for key in keys:
        base, _, sub = key.partition("_")
        if not sub or is_index(sub[1:-1], singles):
            families.add(base)
    return Scope(frozenset(keys), singles, frozenset(families))


_Walked = tuple[tuple[Text, tuple[SymbolUse, ...], tuple[UnreadableMaths, ...]], ...]


def chapter_maths(course: Course, chapter: Chapter) -> _Walked:
    """Each text of a chapter that has maths, with the symbols it uses and the spans that could
    not be read, in reading order: walked once per run for CK203, CK204 and CK205 together.

    Each rule walks every chapter before the next starts, and `latex_symbols` keeps the walks
    of its last 4,096 texts: past ~900 chapters a lesson was evicted before the next rule asked
    again, and all three walked every span of the course.
    """

    def walked() -> _Walked:
        # kept for the whole run: only the texts with maths, as tuples
        both = (
            (text, tuple(symbols_in_markdown(text.value)), tuple(unreadable_maths(text.value)))
            for text in chapter_texts(course, chapter)
        )
        return tuple(walk for walk in both if walk[1] or walk[2])

    return course.derive_of(chapter.id, "notation_maths", walked)


def chapter_uses(course: Course, chapter: Chapter) -> Iterator[tuple[SymbolUse, Text]]:
    """Every symbol the maths of a chapter uses, with the text it is in, in reading order.

    `text.locate(use.offset)` gives the exact location; it walks the file, so only a rule
    that reports a use pays for it.
    """
    for text, uses, _ in chapter_maths(course, chapter):
        if text.kind == "claim":
            continue  # a claim repeats the thesis; its maths is read once, in the gloss
        for use in uses:
            yield use, text


def _suggest(use: SymbolUse, scope: Scope) -> str:
    if use.follows_letter and use.sub:
        whole = f"{use.base}_{{{use.raw_sub}"
        candidates = [k for k in scope.keys if k.startswith(whole)]
        if candidates:
            return (
                f"; TeX reads `{use.base}_{use.raw_sub}…` as a subscript of one character: "
                f"write `{sorted(candidates)[0]}`"
            )
    lowered = {key.casefold(): key for key in scope.keys}
    if use.key.casefold() in lowered:
        return f"; did you mean '{shown(lowered[use.key.casefold()])}'?"
    close = difflib.get_close_matches(use.key, sorted(scope.keys), n=1, cutoff=0.75)
    return f"; did you mean '{shown(close[0])}'?" if close else ""


@rule(
    "CK203",
    "symbol-unused",
    Severity.WARNING,
    per_chapter=INHERITED_NOTATION,
)
def symbol_unused(ctx: Context) -> Iterator[Finding]:
    """A chapter declares a symbol that none of its maths uses.

    The chapter's maths is its problem, propositions, figure titles, captions and alt text,
    its lessons (body and quiz) and its problem and exercise statements. An indexed use counts
    for its family and its indices: `h_{t-1}` uses `h_t` and `t`.

    Fails:
        notation: [{symbol: d_v, meaning: width of a value}]   # no $d_v$ anywhere
    Passes:
        notation: [{symbol: d_v, meaning: width of a value}]   # a lesson writes $T^2 d_v$
    """
    course = ctx.course
    for chapter in ctx.chapters():
        if chapter_incomplete(chapter):
            continue  # the maths of what did not load is unknown (its CK1xx error says why)
        scope = scope_of(course, chapter)
        used: set[str] = set()
        for use, _ in chapter_uses(course, chapter):
            used.add(use.key)
            if is_index(use.sub, scope.singles):
                used.add(use.base)
                used.update(use.sub_letters)
                used.update(k for k in scope.keys if k.startswith(use.base + "_{"))
        for index, entry in enumerate(chapter.manifest.notation):
            key = declared_key(entry.symbol)
            if key is not None and key not in used:
                yield Finding(
                    chapter.manifest.loc("notation", index, "symbol"),
                    f"'{entry.symbol}' is declared but no maths of {chapter.id} uses it; "
                    "remove the entry or use the symbol",
                )


@rule(
    "CK204",
    "symbol-undeclared",
    per_chapter=(*INHERITED_NOTATION, "book0_loaded"),
)
def symbol_undeclared(ctx: Context) -> Iterator[Finding]:
    """The maths of a chapter uses a symbol that no table in its scope declares.

    The scope is the chapter's own notation table, the notation of the Book 0 entries it links,
    and course.yaml's course-wide table. The first use of each undeclared symbol is reported, at
    its line and column. A symbol is a letter, a Greek letter or a named symbol
    (`\\mathrm{softmax}`) with its subscript; operators, numbers, `\\text{}` and the `O` of
    big-O do not count (see `coursekit.latex_symbols`). A subscript made of digits and declared
    one-letter symbols is an index: with `h_t` and `t` declared, `h_{t-1}` and `h_1` are fine.

    Fails:
        # chapter notation declares T, d; Fig. 2's caption says
        caption: Attention spends $O(n^2)$ work on the grid.
    Passes:
        caption: Attention spends $O(T^2)$ work on the grid.
    """
    course = ctx.course
    for chapter in ctx.chapters():
        if chapter.manifest.apparatus and book0_did_not_load(course):
            continue  # part of its scope is in a Book 0 that did not load
        scope = scope_of(course, chapter)
        reported: set[str] = set()
        # the tables that could declare it: removing a symbol from one of them shows up here
        tables = (chapter.path, course.manifest_path, *book0_paths(course))
        for use, text in chapter_uses(course, chapter):
            if use.key in reported or scope.covers(use):
                continue
            reported.add(use.key)
            yield Finding(
                text.locate(use.offset),
                f"'{shown(use.key)}' is not declared for {chapter.id} "
                "(its notation table, the apparatus it links, or course.yaml)"
                + _suggest(use, scope),
                related=tables,
            )


@rule("CK205", "maths-unreadable", per_chapter=("notation_tables",))
def maths_unreadable(ctx: Context) -> Iterator[Finding]:
    """The LaTeX reader failed on a span of maths, so its symbols could not be checked.

    This is a failure of the reader (pylatexenc), not necessarily of the maths: the span is
    reported rather than passed as if it used no symbol. Rewrite the span (or report the bug);
    `<!-- coursekit: ignore[CK205] -->` accepts it knowingly.

    Fails:
        body: the cost is $T\\,d$   # with a LaTeX reader that raises on it
    Passes:
        body: the cost is $T\\,d$   # read: uses T and d
    """
    course = ctx.course
    for entries, _ in notation_tables(course, ctx.only):
        for entry in entries:
            reason = maths_error(entry.symbol)
            if reason is not None:
                yield Finding(
                    entry.loc("symbol"),
                    f"cannot read the symbol '{entry.symbol}' ({reason}); its uses are not checked",
                )
    for chapter in ctx.chapters():
        for text, _, unreadable in chapter_maths(course, chapter):
            for span in unreadable:
                yield Finding(
                    text.locate(span.offset),
                    f"cannot read the maths {_clip(span.latex)} ({span.reason}); "
                    "its symbols are not checked",
                )


def _clip(latex: str, limit: int = 60) -> str:
    flat = " ".join(latex.split())
    return f"'{flat}'" if len(flat) <= limit else f"'{flat[: limit - 1]}…'"
