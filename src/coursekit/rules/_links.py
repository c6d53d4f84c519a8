"""Markdown links with a scheme (`[Fig. 2](fig:2)`) and plain mentions ("II.2 Prop. 1")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from coursekit.bounds import ref_number
from coursekit.hints import did_you_mean
from coursekit.latex_symbols import mask_code
from coursekit.model.tree import Course

# The target stops at whitespace, so a link title (`(fig:2 "Fig. 2")`) is left out.
_LINK = re.compile(r"(?<!!)\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]\((?P<target>[^)\s]+)[^)]*\)")
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)$")
# "Prop. 2", "Proposition 2", "II.2 Prop. 1" (the chapter id may precede it).
_MENTION = re.compile(
    r"(?:\b(?P<chapter>[IVXLC]+\.[1-9][0-9]*)\s+)?\bProp(?:\.|osition)\s*(?P<number>[0-9]+)\b"
)

COURSE_SCHEMES = ("lesson", "chapter", "fig", "prop", "apparatus", "eq")
WEB_SCHEMES = ("http", "https", "mailto", "ftp", "doi", "arxiv")


@dataclass(frozen=True, slots=True)
class Link:
    scheme: str  # lowercased; "" for a relative link
    rest: str
    target: str
    offset: int  # of the target inside the text
    span: tuple[int, int]  # the whole link


def links(markdown: str) -> tuple[Link, ...]:
    return _links(markdown)


@lru_cache(maxsize=8192)
def _links(markdown: str) -> tuple[Link, ...]:
    return tuple(_find_links(markdown))


def _find_links(markdown: str) -> Iterator[Link]:
    masked = mask_code(markdown)
    for match in _LINK.finditer(masked):
        target = match.group("target")
        scheme_match = _SCHEME.match(target)
        scheme = scheme_match.group("scheme").lower() if scheme_match else ""
        rest = scheme_match.group("rest") if scheme_match else target
        yield Link(scheme, rest, target, match.start("target"), match.span())


@dataclass(frozen=True, slots=True)
class Mention:
    chapter: str | None
    number: int | None  # None: more digits than any proposition number
    digits: str
    offset: int


def mentions(text: str, skip: list[tuple[int, int]]) -> Iterator[Mention]:
    """Plain-text proposition mentions outside the given spans (links are judged by target)."""
    for match in _MENTION.finditer(mask_code(text)):
        if any(start <= match.start() < end for start, end in skip):
            continue
        digits = match.group("number")
        yield Mention(match.group("chapter"), ref_number(digits), digits, match.start())


def known_chapters(course: Course) -> list[str]:
    """Chapters a reference may name: those the books list, and those that loaded."""
    listed = {cid for book in course.books.values() for cid in book.manifest.chapters}
    return sorted(listed | set(course.chapters))


def no_such_chapter(course: Course, shown: str, chapter_id: str) -> str:
    """The message for a reference into a chapter that does not exist."""
    return f"'{shown}' points into chapter '{chapter_id}', which does not exist" + did_you_mean(
        chapter_id, known_chapters(course)
    )
