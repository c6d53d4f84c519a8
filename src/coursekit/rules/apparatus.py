"""Apparatus links (CK3xx): chapters lean on Book 0, and only on Book 0."""

from __future__ import annotations

from collections.abc import Iterator

from coursekit.diagnostics import Severity
from coursekit.hints import did_you_mean
from coursekit.model.documents import ApparatusEntry
from coursekit.model.tree import Course
from coursekit.rules._broken import APPARATUS_BOOK, book0_did_not_load
from coursekit.rules.base import Context, Finding, rule


def book0_entries(course: Course) -> dict[str, ApparatusEntry]:
    book = course.books.get(APPARATUS_BOOK)
    if book is None:
        return {}
    entries: dict[str, ApparatusEntry] = {}
    for entry in book.manifest.apparatus:
        entries.setdefault(entry.id, entry)
    return entries


def book0_paths(course: Course) -> tuple[str, ...]:
    """Where Book 0 is declared: a finding about a missing entry depends on it."""
    book = course.books.get(APPARATUS_BOOK)
    return (book.path,) if book else ()


def _same_title(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


@rule("CK301", "apparatus-unresolved", per_chapter=("book0_ids", "chapter_ids"))
def apparatus_unresolved(ctx: Context) -> Iterator[Finding]:
    """An apparatus link names an entry Book 0 does not have.

    Fails:
        apparatus: [{id: 0.IT.09}]
    Passes:
        apparatus: [{id: 0.IT.01}]
    """
    course = ctx.course
    if book0_did_not_load(course):
        return  # its CK1xx error is the one to fix
    entries = book0_entries(course)
    for chapter in ctx.chapters():
        for index, link in enumerate(chapter.manifest.apparatus):
            if link.id in entries or link.id in course.chapters:
                continue  # a chapter id is CK302's
            yield Finding(
                chapter.manifest.loc("apparatus", index, "id"),
                f"apparatus entry '{link.id}' does not exist in Book 0"
                + did_you_mean(link.id, sorted(entries)),
                related=book0_paths(course),
            )


@rule("CK302", "apparatus-not-book0", per_chapter=("chapter_ids",), course_part=True)
def apparatus_not_book0(ctx: Context) -> Iterator[Finding]:
    """Apparatus lives in Book 0 only: an entry declared in another book, or a link to a chapter.

    A chapter of Book I or II is taught, not assumed; point at it from a lesson with
    `[Chapter I.4](chapter:I.4)` instead.

    Fails:
        # II/2-from-recurrence-to-attention/chapter.yaml
        apparatus: [{id: I.4}]
    Passes:
        apparatus: [{id: 0.LA.03}]
    """
    course = ctx.course
    for book_id, book in course.books.items() if ctx.course_part else ():
        if book_id == APPARATUS_BOOK:
            continue
        for index, entry in enumerate(book.manifest.apparatus):
            yield Finding(
                book.manifest.loc("apparatus", index, "id"),
                f"apparatus entry '{entry.id}' is declared in book {book_id}; "
                "only Book 0 (0/book.yaml) holds the apparatus",
            )
    for chapter in ctx.chapters():
        for index, link in enumerate(chapter.manifest.apparatus):
            if link.id in course.chapters:
                yield Finding(
                    chapter.manifest.loc("apparatus", index, "id"),
                    f"'{link.id}' is a chapter, not an apparatus entry; link it from a lesson "
                    f"as [Chapter {link.id}](chapter:{link.id})",
                )


@rule("CK303", "apparatus-title-mismatch", per_chapter=("book0_linked",))
def apparatus_title_mismatch(ctx: Context) -> Iterator[Finding]:
    """A title shown with an apparatus link differs from the entry's title in Book 0.

    Fails:
        apparatus: [{id: 0.IT.01, title: Entropy and information}]
    Passes:
        apparatus: [{id: 0.IT.01, title: Entropy}]
    """
    entries = book0_entries(ctx.course)
    for chapter in ctx.chapters():
        for index, link in enumerate(chapter.manifest.apparatus):
            entry = entries.get(link.id)
            if entry is None or link.title is None or _same_title(link.title, entry.title):
                continue
            yield Finding(
                chapter.manifest.loc("apparatus", index, "title"),
                f"title '{link.title}' differs from {link.id}'s title in Book 0: '{entry.title}'",
                related=(entry.source_path,),
            )


@rule("CK304", "apparatus-duplicate-link", per_chapter=())
def apparatus_duplicate_link(ctx: Context) -> Iterator[Finding]:
    """A chapter links the same apparatus entry twice.

    Fails:
        apparatus: [{id: 0.IT.01}, {id: 0.IT.01}]
    Passes:
        apparatus: [{id: 0.IT.01}]
    """
    for chapter in ctx.chapters():
        seen: set[str] = set()
        for index, link in enumerate(chapter.manifest.apparatus):
            if link.id in seen:
                yield Finding(
                    chapter.manifest.loc("apparatus", index, "id"),
                    f"'{link.id}' is already linked above; remove this link",
                )
            seen.add(link.id)


@rule("CK305", "apparatus-planned", Severity.WARNING, per_chapter=("book0_linked",))
def apparatus_planned(ctx: Context) -> Iterator[Finding]:
    """A draft chapter links a Book 0 entry that is only planned: owed content.

    A warning while the chapter is a draft (`coursekit owed` lists it); once the chapter is
    `published` it is an error, CK705.

    Fails:
        apparatus: [{id: 0.IT.02}]   # 0.IT.02 has status: planned
    Passes:
        apparatus: [{id: 0.IT.01}]   # 0.IT.01 has status: written
    """
    entries = book0_entries(ctx.course)
    for chapter in ctx.chapters():
        if chapter.manifest.status == "published":
            continue
        for index, link in enumerate(chapter.manifest.apparatus):
            entry = entries.get(link.id)
            if entry is not None and entry.status == "planned":
                yield Finding(
                    chapter.manifest.loc("apparatus", index, "id"),
                    f"'{link.id}' ({entry.title}) is only planned in Book 0: owed before "
                    f"{chapter.id} can be published",
                )
