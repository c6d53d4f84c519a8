"""Markdown links with a scheme (`[Fig. 2](fig:2)`) and plain mentions ("II.2 Prop. 1")."""

from __future__ import annotations

import re
from collections.abc import Iterator

from coursekit.bounds import ref_number
from coursekit.hints import did_you_mean
from coursekit.markdown import scan
from coursekit.memo import per_text
from coursekit.model.tree import Course
from coursekit.records import record
from coursekit.rules._broken import chapter_did_not_load

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)$")
# "Prop. 2", "Proposition 2", "II.2 Prop. 1" (the chapter id may precede it).
_MENTION = re.compile(
    r"(?:\b(?P<chapter>[IVXLC]+\.[1-9][0-9]*)\s+)?\bProp(?:\.|osition)\s*(?P<number>[0-9]+)\b"
)

COURSE_SCHEMES = ("lesson", "chapter", "fig", "prop", "apparatus", "eq")
WEB_SCHEMES = ("http", "https", "mailto", "ftp", "doi", "arxiv")


@record(frozen=True, slots=True)
class Link:
    scheme: str  # lowercased; "" for a relative link
    rest: str
    target: str
    offset: int  # of the target inside the text
    span: tuple[int, int]  # the whole link


def links(markdown: str) -> tuple[Link, ...]:
    return _links(markdown)


@per_text(8192)
def _links(markdown: str) -> tuple[Link, ...]:
    return tuple(_find_links(markdown))


def _find_links(markdown: str) -> Iterator[Link]:
    for found in scan(markdown).links:
        scheme_match = _SCHEME.match(found.target)
        scheme = scheme_match.group("scheme").lower() if scheme_match else ""
        rest = scheme_match.group("rest") if scheme_match else found.target
        yield Link(scheme, rest, found.target, found.offset, found.span)


@record(frozen=True, slots=True)
class Mention:
    chapter: str | None
    number: int | None  # None: more digits than any proposition number
    digits: str
    offset: int


def mentions(text: str, skip: list[tuple[int, int]]) -> Iterator[Mention]:
    """Plain-text proposition mentions outside the given spans (links are judged by target)."""
    masked = scan(text).masked
    if "Prop" not in masked:  # every mention holds it; the pattern alone is ~100x slower
        return
    for match in _MENTION.finditer(masked):
        if any(start <= match.start() < end for start, end in skip):
            continue
        digits = match.group("number")
        yield Mention(match.group("chapter"), ref_number(digits), digits, match.start())


def known_chapters(course: Course) -> list[str]:
    """Chapters a reference may name: those the books list, and those that loaded."""
    listed = {cid for book in course.books.values() for cid in book.manifest.chapters}
    return sorted(listed | set(course.chapters))


def no_such_chapter(course: Course, shown: str, chapter_id: str) -> str | None:
    """The message for a reference into a chapter that does not exist.

    None for a chapter that exists but did not load (see rules/_broken.py): a structural
    error already says why, and the reference is not at fault.
    """
    if chapter_did_not_load(course, chapter_id):
        return None
    return f"'{shown}' points into chapter '{chapter_id}', which does not exist" + did_you_mean(
        chapter_id, known_chapters(course)
    )
