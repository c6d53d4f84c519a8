"""Course-wide facts a per-chapter rule may consult, each as a digest of exactly that fact.

A per-chapter rule names the facts it reads (`@rule(..., per_chapter=("book0_linked",))`);
its results on a chapter are kept under the chapter's own files plus these digests, so an edit
elsewhere in the course that leaves the facts alone does not re-run it there. A fact is a
function of the course and the chapter being checked: `book0_linked` is the Book 0 entries
*that chapter* links, so renaming one entry's title re-checks only the chapters linking it.
Adding a fact: a function here and its name in `FACTS`; a digest must cover everything a rule
could read through the fact, or a stale finding would be replayed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from coursekit.model.tree import Chapter, Course
from coursekit.rules._broken import APPARATUS_BOOK, book0_did_not_load

Fact = Callable[[Course, Chapter], str]


def digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _book0_entries(course: Course) -> dict[str, tuple[str, str]]:
    """Each Book 0 entry's id -> (its fields as JSON, where it is declared); the first wins."""

    def compute() -> dict[str, tuple[str, str]]:
        book = course.books.get(APPARATUS_BOOK)
        found: dict[str, tuple[str, str]] = {}
        for entry in book.manifest.apparatus if book else []:
            found.setdefault(entry.id, (entry.model_dump_json(), entry.source_path))
        return found

    return course.derive(("facts", "book0"), compute)


def book0_loaded(course: Course, chapter: Chapter) -> str:
    """Where Book 0 is declared, and whether it loaded."""
    book = course.books.get(APPARATUS_BOOK)
    return digest([book.path if book else None, book0_did_not_load(course)])


def book0_ids(course: Course, chapter: Chapter) -> str:
    """Book 0's entry ids, where Book 0 is declared, and whether it loaded."""
    return course.derive(
        ("facts", "book0_ids"),
        lambda: digest([sorted(_book0_entries(course)), book0_loaded(course, chapter)]),
    )


def book0_linked(course: Course, chapter: Chapter) -> str:
    """The Book 0 entries this chapter's apparatus links (all their fields), by id."""
    entries = _book0_entries(course)
    linked = sorted({link.id for link in chapter.manifest.apparatus})
    return digest([[i, entries.get(i)] for i in linked])


def apparatus_linked(course: Course, chapter: Chapter) -> str:
    """The apparatus entries (of any book: the first declaration wins) this chapter links."""

    def compute() -> dict[str, tuple[str, str]]:
        return {i: (e.model_dump_json(), e.source_path) for i, e in course.apparatus.items()}

    entries = course.derive(("facts", "apparatus"), compute)
    linked = sorted({link.id for link in chapter.manifest.apparatus})
    return digest([[i, entries.get(i)] for i in linked])


def course_notation(course: Course, chapter: Chapter) -> str:
    """course.yaml's notation table (every field), and where course.yaml is."""
    manifest = course.manifest
    return course.derive(
        ("facts", "course_notation"),
        lambda: digest(
            [
                course.manifest_path,
                None if manifest is None else [e.model_dump_json() for e in manifest.notation],
            ]
        ),
    )


def chapter_ids(course: Course, chapter: Chapter) -> str:
    """The ids of every chapter that loaded."""
    return course.derive(("facts", "chapter_ids"), lambda: digest(sorted(course.chapters)))


def chapter_summaries(course: Course, chapter: Chapter) -> str:
    """What a reference into another chapter resolves against, for every chapter: the books'
    and the course's lists, which chapters loaded, and each one's path, items (lessons and
    planned), figure numbers and proposition numbers."""

    def compute() -> str:
        listed = {book_id: book.manifest.chapters for book_id, book in course.books.items()}
        books = course.manifest.books if course.manifest is not None else None
        each = {
            chapter_id: [
                loaded.path,
                [item.id for item in loaded.manifest.items],
                [figure.number for figure in loaded.manifest.figures],
                [prop.number for prop in loaded.manifest.propositions],
            ]
            for chapter_id, loaded in course.chapters.items()
        }
        return digest([books, listed, each])

    return course.derive(("facts", "chapter_summaries"), compute)


def notation_tables(course: Course, chapter: Chapter) -> str:
    """Every symbol of course.yaml's table and of each apparatus entry's, with where it is
    written (a rule reporting on a symbol there reads no more of those files)."""

    def compute() -> str:
        tables = [course.manifest.notation] if course.manifest is not None else []
        tables += [
            entry.notation for book in course.books.values() for entry in book.manifest.apparatus
        ]
        rows = []
        for table in tables:
            for entry in table:
                where = entry.loc("symbol")
                rows.append([entry.symbol, where.path, where.line, where.column])
        return digest(rows)

    return course.derive(("facts", "notation_tables"), compute)


FACTS: dict[str, Fact] = {
    "apparatus_linked": apparatus_linked,
    "book0_ids": book0_ids,
    "book0_loaded": book0_loaded,
    "book0_linked": book0_linked,
    "chapter_ids": chapter_ids,
    "chapter_summaries": chapter_summaries,
    "course_notation": course_notation,
    "notation_tables": notation_tables,
}
