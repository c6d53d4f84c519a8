"""Cross-references and figures (CK5xx): every link resolves, figures are numbered and described."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from coursekit.bounds import ref_number, shorten
from coursekit.hints import did_you_mean
from coursekit.model.base import Location
from coursekit.model.deferred import chapter_outline
from coursekit.model.tree import Chapter
from coursekit.records import record
from coursekit.rules._broken import book0_did_not_load, chapter_did_not_load
from coursekit.rules._links import (
    COURSE_SCHEMES,
    WEB_SCHEMES,
    known_chapters,
    links,
    no_such_chapter,
)
from coursekit.rules._sequence import breaks
from coursekit.rules._texts import chapter_texts
from coursekit.rules.apparatus import book0_entries, book0_paths
from coursekit.rules.base import Context, Finding, rule


@record(frozen=True, slots=True)
class LinkAt:
    scheme: str
    rest: str
    target: str
    chapter: Chapter
    location: Location


def _links(ctx: Context, scheme: str | None = None) -> Iterator[LinkAt]:
    course = ctx.course
    for chapter in ctx.chapters():
        for text in chapter_texts(course, chapter):
            for link in links(text.value):
                if scheme is None or link.scheme == scheme:
                    yield LinkAt(
                        link.scheme, link.rest, link.target, chapter, text.locate(link.offset)
                    )


def _split(rest: str, chapter: Chapter) -> tuple[str, str]:
    """`II.2/masks` -> ("II.2", "masks"); `masks` -> (this chapter, "masks")."""
    head, slash, tail = rest.partition("/")
    return (head, tail) if slash else (chapter.id, rest)


@rule("CK501", "lesson-ref-unresolved", per_chapter=("chapter_summaries",))
def lesson_ref_unresolved(ctx: Context) -> Iterator[Finding]:
    """A link to a lesson that its chapter neither has nor plans.

    `lesson:II.2/masks` points at the item `masks` of chapter II.2, written or `planned`;
    `lesson:masks` means the chapter the link is written in.

    Fails:
        [the lesson on masks](lesson:II.2/mask)
    Passes:
        [the lesson on masks](lesson:II.2/masks)   # items: [{planned: masks, ...}]
    """
    course = ctx.course
    for link in _links(ctx, "lesson"):
        chapter_id, item_id = _split(link.rest, link.chapter)
        target = course.chapters.get(chapter_id)
        if target is None:
            message = no_such_chapter(course, link.target, chapter_id)
            if message is not None:
                yield Finding(link.location, message)
            continue
        items = chapter_outline(target)[0]  # (another chapter's manifest is not validated)
        if item_id not in items:
            yield Finding(
                link.location,
                f"'{link.target}': {chapter_id} has no lesson or planned item '{item_id}'"
                + did_you_mean(item_id, items),
                related=(target.path,),
            )


@rule("CK502", "chapter-ref-unresolved", per_chapter=("chapter_summaries",))
def chapter_ref_unresolved(ctx: Context) -> Iterator[Finding]:
    """A link to a chapter that no book lists.

    Fails:
        [Chapter I.4](chapter:I.40)
    Passes:
        [Chapter I.4](chapter:I.4)
    """
    known = known_chapters(ctx.course)
    for link in _links(ctx, "chapter"):
        if link.rest not in known and not chapter_did_not_load(ctx.course, link.rest):
            yield Finding(
                link.location,
                f"'{link.target}': no chapter '{link.rest}'" + did_you_mean(link.rest, known),
            )


_FIG = re.compile(r"^(?:(?P<chapter>[^/]+)/)?(?P<number>[0-9]+)$")


@rule("CK503", "figure-ref-unresolved", per_chapter=("chapter_summaries",))
def figure_ref_unresolved(ctx: Context) -> Iterator[Finding]:
    """A link to a figure that does not exist (`fig:2` in this chapter, `fig:II.2/2` in another).

    Fails:
        [Fig. 4](fig:4)    # the chapter has figures 1-3
    Passes:
        [Fig. 2](fig:2)
    """
    course = ctx.course
    for link in _links(ctx, "fig"):
        match = _FIG.match(link.rest)
        if match is None:
            yield Finding(
                link.location,
                f"'{link.target}' is not a figure reference; write fig:<N> or fig:<CHAPTER>/<N>",
            )
            continue
        chapter_id = match.group("chapter") or link.chapter.id
        target = course.chapters.get(chapter_id)
        if target is None:
            message = no_such_chapter(course, link.target, chapter_id)
            if message is not None:
                yield Finding(link.location, message)
            continue
        numbers = chapter_outline(target)[1]
        if ref_number(match.group("number")) not in numbers:
            have = f"figures 1–{len(numbers)}" if numbers else "no figures"
            yield Finding(
                link.location,
                f"'{shorten(link.target)}' does not resolve: {chapter_id} has {have}",
                related=(target.path,),
            )


@rule("CK504", "apparatus-ref-unresolved", per_chapter=("book0_ids",))
def apparatus_ref_unresolved(ctx: Context) -> Iterator[Finding]:
    """A link into Book 0 (`apparatus:0.IT.01`) names an entry that does not exist.

    Fails:
        [entropy](apparatus:0.IT.1)
    Passes:
        [entropy](apparatus:0.IT.01)
    """
    if book0_did_not_load(ctx.course):
        return
    entries = sorted(book0_entries(ctx.course))
    for link in _links(ctx, "apparatus"):
        if link.rest not in entries:
            yield Finding(
                link.location,
                f"'{link.target}': Book 0 has no entry '{link.rest}'"
                + did_you_mean(link.rest, entries),
                related=book0_paths(ctx.course),
            )


@rule("CK505", "link-scheme-unknown", per_chapter=())
def link_scheme_unknown(ctx: Context) -> Iterator[Finding]:
    """A Markdown link uses a scheme coursekit does not know (often a typo of one it does).

    Course links are `lesson:`, `chapter:`, `fig:`, `prop:`, `apparatus:` and `eq:`; web
    links (`https:`, `mailto:`, ...) and relative links are left alone.

    Fails:
        [Fig. 2](figure:2)
    Passes:
        [Fig. 2](fig:2)
    """
    for link in _links(ctx):
        if not link.scheme or link.scheme in COURSE_SCHEMES or link.scheme in WEB_SCHEMES:
            continue
        yield Finding(
            link.location,
            f"unknown link scheme '{link.scheme}:' in '{link.target}'"
            + (
                did_you_mean(link.scheme, list(COURSE_SCHEMES), cutoff=0.5)
                or f" (course links: {', '.join(s + ':' for s in COURSE_SCHEMES)})"
            ),
        )


@rule("CK506", "figure-numbering", fixable=True, per_chapter=())
def figure_numbering(ctx: Context) -> Iterator[Finding]:
    """Figures are not numbered 1, 2, ..., n in order (a gap, a repeat, or out of order).

    `coursekit fix` renumbers them (and the `fig:` links to them).

    Fails:
        figures: [{number: 1, ...}, {number: 3, ...}]
    Passes:
        figures: [{number: 1, ...}, {number: 2, ...}]
    """
    for chapter in ctx.chapters():
        figures = chapter.manifest.figures
        for index, expected, why in breaks([figure.number for figure in figures]):
            yield Finding(
                chapter.manifest.loc("figures", index, "number"),
                f"figure {figures[index].number} {why}; it should be {expected} "
                "(figures run 1..n in order)",
                fixable=True,
            )


@rule("CK507", "figure-alt-missing", per_chapter=())
def figure_alt_missing(ctx: Context) -> Iterator[Finding]:
    """A figure has no alt text: what a reader who cannot see it needs to know.

    Fails:
        figures:
          - {number: 1, title: The chain of waits, asset: figures/chain.svg}
    Passes:
        figures:
          - number: 1
            title: The chain of waits
            alt: A row of boxes h_1 to h_T joined left to right by arrows.
            asset: figures/chain.svg
    """
    for chapter in ctx.chapters():
        manifest = chapter.manifest
        for index, figure in enumerate(manifest.figures):
            if figure.alt is None or not figure.alt.strip():
                yield Finding(
                    manifest.loc("figures", index, "alt")
                    if figure.alt is not None
                    else manifest.loc("figures", index),
                    f"Fig. {figure.number} ('{figure.title}') has no alt text",
                )


@rule("CK508", "figure-asset-missing", per_chapter=())
def figure_asset_missing(ctx: Context) -> Iterator[Finding]:
    """A figure's asset is not a file below the chapter folder.

    Fails:
        asset: figures/path-lenght.svg
    Passes:
        asset: figures/path-length.svg
    """
    for chapter in ctx.chapters():
        manifest = chapter.manifest
        below = sorted(
            path[len(chapter.dir) + 1 :]
            for path in chapter.assets
            if path.startswith(chapter.dir + "/")
        )
        for index, figure in enumerate(manifest.figures):
            wanted = posixpath.normpath(figure.asset)
            if wanted.startswith("../") or wanted.startswith("/") or wanted not in below:
                yield Finding(
                    manifest.loc("figures", index, "asset"),
                    f"asset '{figure.asset}' does not exist in {chapter.dir}/"
                    + did_you_mean(wanted, below),
                )
