"""The reading list (CK608, CK707): a cited paper can be found again.

A paper, article or book in a lesson's `reading:` needs a `year` and an `identifier` (an arXiv
id, a DOI, an ISBN or a URL; CK607 checks its form). A draft chapter is warned (CK608); a
published one fails (CK707), as the other `published-*` rules do.
"""

from __future__ import annotations

from collections.abc import Iterator

from coursekit.diagnostics import Severity
from coursekit.model.base import Location
from coursekit.rules.base import Context, Finding, rule

_CITED = ("paper", "article", "book")


def _incomplete(ctx: Context, published: bool) -> Iterator[tuple[Location, str]]:
    for chapter in ctx.chapters():
        if (chapter.manifest.status == "published") != published:
            continue
        for lesson in chapter.lessons.values():
            for index, source in enumerate(lesson.meta.reading):
                if source.kind not in _CITED:
                    continue
                missing = [
                    name
                    for name, value in (("year", source.year), ("identifier", source.identifier))
                    if value is None or not str(value).strip()
                ]
                if missing:
                    yield (
                        lesson.meta.loc("reading", index),
                        f"{source.kind} '{source.title}' has no {' and no '.join(missing)}: "
                        "a reader cannot find it again (an identifier is an arXiv id, DOI, "
                        "ISBN or URL)",
                    )


@rule("CK608", "reading-incomplete", Severity.WARNING, per_chapter=())
def reading_incomplete(ctx: Context) -> Iterator[Finding]:
    """A paper, article or book in a draft chapter's reading list lacks a year or an identifier.

    Fails:
        reading: [{kind: paper, title: Attention Is All You Need}]
    Passes:
        reading:
          - {kind: paper, title: Attention Is All You Need, year: 2017, identifier: arXiv:1706.03762}
    """
    for where, message in _incomplete(ctx, published=False):
        yield Finding(where, message)


@rule("CK707", "published-reading-incomplete", per_chapter=())
def published_reading_incomplete(ctx: Context) -> Iterator[Finding]:
    """A paper, article or book in a published chapter's reading list lacks a year or an id.

    Fails:
        status: published
        ...
        reading: [{kind: paper, title: Attention Is All You Need, year: 2017}]
    Passes:
        reading:
          - {kind: paper, title: Attention Is All You Need, year: 2017, identifier: arXiv:1706.03762}
    """
    for where, message in _incomplete(ctx, published=True):
        yield Finding(where, message)
