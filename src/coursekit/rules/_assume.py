"""Assumptions declared once in the notation, inherited by every lesson that sees the entry.

A notation entry may say `assume: [positive, integer]` ("T is a positive integer"). A lesson
sees the course-wide table, the tables of the apparatus entries its chapter links, and its
chapter's table, in that order; a `local: true` entry replaces what the earlier tables said about
the symbol, any other entry adds to it. The lesson's own `assume` adds to the result. The symbol
must be one name formulas can use (`T`, `d_h`, `W_{hh}`, `\\alpha`): `\\mathrm{softmax}` cannot
carry assumptions, and saying so is reported (CK801).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from coursekit.model.base import Location
from coursekit.model.documents import NotationEntry
from coursekit.model.tree import Chapter, Course


def symbol_name(latex: str) -> str | None:
    """The formula name a notation symbol stands for (`W_{hh}` -> `W_hh`), or None."""
    from coursekit.verify import FormulaError, parse_latex
    from coursekit.verify.tree import Name

    try:
        node = parse_latex(latex)
    except FormulaError:
        return None
    return node.id if isinstance(node, Name) and node.id != "pi" else None


def _tables(course: Course, chapter: Chapter | None) -> Iterator[NotationEntry]:
    if course.manifest is not None:
        yield from course.manifest.notation
    if chapter is None:
        return
    apparatus = course.apparatus
    for link in chapter.manifest.apparatus:
        if link.id in apparatus:
            yield from apparatus[link.id].notation
    yield from chapter.manifest.notation


def inherited(course: Course, chapter: Chapter | None) -> dict[str, set[str]]:
    """Symbol name -> assumption kinds, as a lesson of `chapter` inherits them."""
    kinds: dict[str, set[str]] = {}
    for entry in _tables(course, chapter):
        name = symbol_name(entry.symbol) if entry.assume or entry.local else None
        if name is None:
            continue
        if entry.local:
            kinds[name] = set(entry.assume)
        else:
            kinds.setdefault(name, set()).update(entry.assume)
    return {name: found for name, found in kinds.items() if found}


def merged(own: Mapping[str, list[str]], notation: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """A lesson's `assume` (kind -> names) with what the notation gives each symbol."""
    out: dict[str, set[str]] = {kind: set(names) for kind, names in own.items() if names}
    for name, kinds in notation.items():
        for kind in kinds:
            out.setdefault(kind, set()).add(name)
    return {kind: sorted(names) for kind, names in sorted(out.items())}


def notation_owners(
    course: Course, chapters: Iterable[Chapter] | None, course_wide: bool
) -> list[list[NotationEntry]]:
    """The notation tables: course.yaml's and each apparatus entry's (when `course_wide`),
    then each of `chapters`' (None: every chapter's)."""
    owners: list[list[NotationEntry]] = []
    if course_wide and course.manifest is not None:
        owners.append(course.manifest.notation)
    if course_wide:
        owners += [entry.notation for entry in course.apparatus.values()]
    chosen = course.chapters.values() if chapters is None else chapters
    owners += [chapter.manifest.notation for chapter in chosen]
    return owners


def unusable(
    course: Course, chapters: Iterable[Chapter] | None = None, course_wide: bool = True
) -> Iterator[tuple[Location, str]]:
    """Notation entries whose assumptions cannot apply: the symbol is not one formula name."""
    owners = notation_owners(course, chapters, course_wide)
    for table in owners:
        for entry in table:
            if entry.assume and symbol_name(entry.symbol) is None:
                yield (
                    entry.loc("assume"),
                    f"notation symbol '{entry.symbol}' carries assumptions, but it is not one "
                    "name a formula can use (such as T, d_h or W_{hh})",
                )


__all__ = ["inherited", "merged", "notation_owners", "symbol_name", "unusable"]
