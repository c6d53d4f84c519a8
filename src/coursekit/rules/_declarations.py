"""The notation tables' declarations as CK201 and CK202 compare them: each table's entries by
symbol key (`coursekit.latex_symbols.notation_key`), the shared ones (not `local`) with their
meanings normalised, and a chapter's known by their place in its table, its manifest read
only to report one (`resolved`). Remembered by identity in a long-lived process (`memo`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from coursekit.latex_symbols import notation_key
from coursekit.memo import ByIdentity
from coursekit.model.base import Location
from coursekit.model.deferred import chapter_notation
from coursekit.model.documents import NotationEntry
from coursekit.model.tree import Chapter, Course
from coursekit.records import record


@record(frozen=True, slots=True)
class Declaration:
    key: str
    entry: NotationEntry
    owner: str  # "course.yaml", "apparatus 0.IT.01", "chapter II.2"

    @property
    def location(self) -> Location:  # looked up only for what is reported
        return self.entry.loc("symbol")


# A meaning as CK201 compares it, remembered: a symbol's one meaning is written again in every
# chapter that declares it (11,000 entries at 1,000 chapters, ~4 ms of each run's rule).
@lru_cache(maxsize=1 << 16)
def _meaning(text: str) -> str:
    return " ".join(text.split()).rstrip(".").casefold()


def table(entries: list[NotationEntry], owner: str) -> list[Declaration]:
    found: list[Declaration] = []
    for entry in entries:
        key = notation_key(entry.symbol)
        if key is not None:
            found.append(Declaration(key, entry, owner))
    return found


# A table's shared declarations (not `local`) with their meanings compared as CK201 compares
# them, by the identity of the table: a long-lived process keeps the manifests an edit did not
# touch, and at 1,000 chapters reading their 11,000 entries again took ~25 ms of each run.
_SHARED: ByIdentity[list[tuple[Declaration, str]]] = ByIdentity(100_000)


def _shared(entries: list[NotationEntry], owner: str) -> list[tuple[Declaration, str]]:
    def compute() -> list[tuple[Declaration, str]]:
        return [
            (decl, _meaning(decl.entry.meaning))
            for decl in table(entries, owner)
            if not decl.entry.local
        ]

    return _SHARED.get(entries, compute, owner)


def notation_tables(
    course: Course, only: frozenset[str] | None = None
) -> Iterator[tuple[list[NotationEntry], str]]:
    """Every notation table: course.yaml's, each apparatus entry's, and each chapter's (those
    of the chapters `only` names, when given)."""
    if course.manifest is not None:
        yield course.manifest.notation, "course.yaml"
    for book in course.books.values():
        for entry in book.manifest.apparatus:
            yield entry.notation, f"apparatus {entry.id}"
    for chapter in _chapters(course):
        if only is None or chapter.id in only:
            yield chapter.manifest.notation, f"chapter {chapter.id}"


def _chapters(course: Course) -> list[Chapter]:
    ordered = [
        course.chapters[cid]
        for book in course.books.values()
        for cid in book.manifest.chapters
        if cid in course.chapters
    ]
    listed = {id(c) for c in ordered}  # by identity: comparing models field by field is slow
    return ordered + [c for c in course.chapters.values() if id(c) not in listed]


class InChapter(NamedTuple):
    """A chapter's shared declaration, known by its place in the chapter's table: the entry
    itself (its manifest) is read only to report on it (`resolved`). A tuple: ~11,000 are
    made at 1,000 chapters, and as frozen records they took ~12 ms more of a ~80 ms rule."""

    key: str
    chapter: Chapter
    place: int  # in the chapter's notation table
    owner: str


Declared = Declaration | InChapter


def resolved(declared: Declared) -> Declaration:
    if isinstance(declared, Declaration):
        return declared
    entry = declared.chapter.manifest.notation[declared.place]
    return Declaration(declared.key, entry, declared.owner)


# A chapter's shared declarations with their meanings as compared, by the identity of its
# notation rows (`chapter_notation`'s, the same objects from run to run while the chapter's
# manifest or record is) and of the chapter: a long-lived process keeps the chapters an edit
# did not touch, and making 11,000 declarations again at 1,000 chapters took ~70 ms a run.
_DECLARED: ByIdentity[list[tuple[Declared, str]]] = ByIdentity(100_000)


def every_shared(course: Course) -> Iterator[tuple[Declared, str]]:
    """Every shared declaration with its meaning as compared: course.yaml's, each apparatus
    entry's, then each chapter's, read without validating a chapter's manifest that waits to
    be (`coursekit.model.deferred`)."""
    if course.manifest is not None:
        yield from _shared(course.manifest.notation, "course.yaml")
    for book in course.books.values():
        for entry in book.manifest.apparatus:
            yield from _shared(entry.notation, f"apparatus {entry.id}")
    for chapter in _chapters(course):
        yield from chapter_shared(chapter)


def chapter_shared(chapter: Chapter) -> list[tuple[Declared, str]]:
    rows = chapter_notation(chapter)

    def compute() -> list[tuple[Declared, str]]:
        owner = f"chapter {chapter.id}"
        found: list[tuple[Declared, str]] = []
        for index, (symbol, meaning, local) in enumerate(rows):
            key = notation_key(symbol)
            if key is not None and not local:
                found.append((InChapter(key, chapter, index, owner), _meaning(meaning)))
        return found

    # (the chapter by identity: the list holds it, so its id is not another's meanwhile)
    return _DECLARED.get(rows, compute, id(chapter))
