"""What the course names but could not load: the rules do not judge against a hole.

A document that fails structurally (CK101 syntax, CK102 unreadable, CK107 duplicate, CK108
misplaced, CK109 missing) is reported once, by the loader or the structure rules. What other
families would say about references into it, symbols it declares or uses, or support it gives,
would only echo that error with a wrong diagnosis ("does not exist", "is never used"), and
fixing the structural error is what resolves them. So those checks stand down where the
document they depend on did not load.
"""

from __future__ import annotations

from coursekit.model.deferred import chapter_held, chapter_listed
from coursekit.model.tree import Chapter, Course

APPARATUS_BOOK = "0"


def book_did_not_load(course: Course, book_id: str) -> bool:
    """A book the course lists whose book.yaml did not load."""
    listed = course.manifest.books if course.manifest is not None else []
    return book_id in listed and book_id not in course.books


def chapter_did_not_load(course: Course, chapter_id: str) -> bool:
    """A chapter its book lists (or in a book that did not load) that is not in the course."""
    if chapter_id in course.chapters:
        return False
    if any(chapter_id in book.manifest.chapters for book in course.books.values()):
        return True
    return book_did_not_load(course, chapter_id.partition(".")[0])


def book0_did_not_load(course: Course) -> bool:
    return book_did_not_load(course, APPARATUS_BOOK)


def chapter_incomplete(chapter: Chapter) -> bool:
    """A chapter some of whose listed lessons, problems or exercises did not load."""
    listed, held = chapter_listed(chapter), chapter_held(chapter)
    return any(not set(ids) <= set(loaded) for ids, loaded in zip(listed, held, strict=True))
