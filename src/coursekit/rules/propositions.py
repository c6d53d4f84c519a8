"""Propositions (CK4xx): numbered 1..n, stated and glossed, Prop. 1 is the thesis, references resolve."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import Any

from coursekit.bounds import ref_number, shorten
from coursekit.model.base import Location
from coursekit.model.deferred import chapter_outline, chapter_status
from coursekit.model.tree import Chapter, Course
from coursekit.records import record
from coursekit.rules._broken import chapter_incomplete
from coursekit.rules._links import links, mentions, no_such_chapter
from coursekit.rules._sequence import breaks
from coursekit.rules._texts import chapter_texts
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.facts import summary

_PROP_TARGET = re.compile(r"^(?:(?P<chapter>[^/]+)/)?(?P<number>[0-9]+)$")


@rule("CK401", "proposition-numbering", fixable=True, per_chapter=())
def proposition_numbering(ctx: Context) -> Iterator[Finding]:
    """Propositions are not numbered 1, 2, ..., n in order (a gap, a repeat, or out of order).

    `coursekit fix` renumbers them (and the references to them).

    Fails:
        propositions:
          - {number: 1, claim: ..., gloss: ...}
          - {number: 1, claim: ..., gloss: ...}
    Passes:
        propositions:
          - {number: 1, claim: ..., gloss: ...}
          - {number: 2, claim: ..., gloss: ...}
    """
    for chapter in ctx.chapters():
        props = chapter.manifest.propositions
        for index, expected, why in breaks([prop.number for prop in props]):
            yield Finding(
                chapter.manifest.loc("propositions", index, "number"),
                f"proposition {props[index].number} {why}; it should be {expected} "
                "(propositions run 1..n in order)",
                fixable=True,
            )


@rule("CK402", "proposition-incomplete", per_chapter=())
def proposition_incomplete(ctx: Context) -> Iterator[Finding]:
    """A proposition has an empty claim or an empty gloss.

    Fails:
        propositions:
          - {number: 1, claim: Attention was the repair for one bottleneck., gloss: ''}
    Passes:
        propositions:
          - number: 1
            claim: Attention was the repair for one bottleneck.
            gloss: It joins any two positions in one step, and pays for it in work.
    """
    for chapter in ctx.chapters():
        manifest = chapter.manifest
        for index, prop in enumerate(manifest.propositions):
            for key in ("claim", "gloss"):
                if not getattr(prop, key).strip():
                    yield Finding(
                        manifest.loc("propositions", index, key)
                        if key in prop.model_fields_set
                        else manifest.loc("propositions", index),
                        f"Prop. {prop.number} of {chapter.id} has no {key}",
                    )


def _first_difference(a: str, b: str) -> str:
    left, right = a.split(), b.split()
    for index, (x, y) in enumerate(zip(left, right, strict=False)):
        if x != y:
            return f"word {index + 1}: '{x}' against '{y}'"
    if len(left) != len(right):
        longer = "the thesis" if len(left) > len(right) else "the claim"
        return f"{longer} goes on after word {min(len(left), len(right))}"
    return "spacing only"


@rule("CK403", "thesis-not-prop1", per_chapter=())
def thesis_not_prop1(ctx: Context) -> Iterator[Finding]:
    """The chapter's thesis is not, word for word, the claim of its Prop. 1.

    Whitespace and line folding do not matter; every word does. A published chapter without
    propositions is reported too (a draft may not have found them yet).

    Fails:
        thesis: Attention was the repair for one bottleneck.
        propositions:
          - {number: 1, claim: Attention was a repair for one bottleneck., gloss: ...}
    Passes:
        thesis: Attention was the repair for one bottleneck.
        propositions:
          - {number: 1, claim: Attention was the repair for one bottleneck., gloss: ...}
    """
    for chapter in ctx.chapters():
        manifest = chapter.manifest
        props = manifest.propositions
        first = next((p for p in props if p.number == 1), props[0] if props else None)
        if first is None:
            # A draft may not have found its propositions yet; a published chapter must.
            if manifest.status != "published":
                continue
            yield Finding(
                manifest.loc("thesis"),
                f"{chapter.id} has no propositions; Prop. 1 must state the thesis",
            )
            continue
        if manifest.thesis.split() != first.claim.split():
            yield Finding(
                manifest.loc("thesis"),
                f"thesis differs from Prop. {first.number}'s claim at "
                f"{_first_difference(manifest.thesis, first.claim)}",
            )


@record(frozen=True, slots=True)
class PropRef:
    chapter: str  # the chapter it points into
    number: int
    location: Location
    shown: str  # as written
    from_lesson: bool


def prop_refs(course: Course, chapter: Chapter) -> Iterator[PropRef]:
    """Every reference to a proposition made from a chapter's texts, links and mentions."""
    for text in chapter_texts(course, chapter):
        spans: list[tuple[int, int]] = []
        for link in links(text.value):
            spans.append(link.span)
            if link.scheme != "prop":
                continue
            match = _PROP_TARGET.match(link.rest)
            target = match.group("chapter") if match else None
            number = ref_number(match.group("number")) if match else None
            yield PropRef(
                target or chapter.id,
                -1 if number is None else number,
                text.locate(link.offset),
                shorten(link.target),
                text.lesson is not None,
            )
        for mention in mentions(text.value, spans):
            yield PropRef(
                mention.chapter or chapter.id,
                -1 if mention.number is None else mention.number,
                text.locate(mention.offset),
                f"{mention.chapter + ' ' if mention.chapter else ''}Prop. {shorten(mention.digits)}",
                text.lesson is not None,
            )


def _supports(chapter: Chapter) -> Iterator[tuple[int, Location]]:
    for problem in chapter.problems.values():
        for index, number in enumerate(problem.meta.supports):
            yield number, problem.meta.loc("supports", index)
    for exercise in chapter.exercises.values():
        for index, number in enumerate(exercise.meta.supports):
            yield number, exercise.meta.loc("supports", index)


@rule("CK404", "proposition-unresolved", per_chapter=("chapter_summaries",))
def proposition_unresolved(ctx: Context) -> Iterator[Finding]:
    """A reference to a proposition that does not exist.

    References are links (`[Prop. 2](prop:2)`, `[II.2 Prop. 1](prop:II.2/1)`), plain mentions
    in lessons, glosses, captions and statements ("Prop. 2", "II.2 Prop. 1"), and the
    `supports` lists of problems and exercises. A reference without a chapter means the
    chapter it is written in.

    Fails:
        # II.2 has propositions 1 and 2
        As [Prop. 3](prop:3) shows, ...
    Passes:
        As [Prop. 2](prop:2) shows, ...
    """
    course = ctx.course
    for chapter in ctx.chapters():
        for ref in prop_refs(course, chapter):
            message = _unresolved(course, ref.chapter, ref.number, ref.shown)
            if message:
                target = course.chapters.get(ref.chapter)
                yield Finding(ref.location, message, related=(target.path,) if target else ())
        for number, location in _supports(chapter):
            message = _unresolved(course, chapter.id, number, f"supports: {number}")
            if message:
                yield Finding(location, message)


def _unresolved(course: Course, chapter_id: str, number: int, shown: str) -> str | None:
    target = course.chapters.get(chapter_id)
    if target is None:
        return no_such_chapter(course, shown, chapter_id)
    numbers = chapter_outline(target)[2]  # (another chapter's manifest is not validated)
    if number in numbers:
        return None
    have = f"Prop. 1–{len(numbers)}" if numbers else "no propositions"
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        have = "Prop. " + ", ".join(str(n) for n in numbers)
    return f"'{shown}' does not resolve: {chapter_id} has {have}"


def _supported(course: Course, chapter: Chapter) -> list[list[str | int]]:
    """The propositions (of any chapter) the chapter's lessons refer to or its problems and
    exercises support, as [chapter id, number] (the chapter's summary CK405 compares)."""
    found = {(ref.chapter, ref.number) for ref in prop_refs(course, chapter) if ref.from_lesson}
    found.update((chapter.id, number) for number, _ in _supports(chapter))
    return [[target, number] for target, number in sorted(found)]


def _supports_summary(ctx: Context, chapter: Chapter) -> Any:
    """The chapter's `_supported`, kept in the store by content (CK405 compares them)."""
    course = ctx.course
    return summary(course, ctx.store, "supports", chapter, partial(_supported, course, chapter))


@rule("CK405", "proposition-unsupported", summaries=(_supports_summary,))
def proposition_unsupported(ctx: Context) -> Iterator[Finding]:
    """A published chapter has a proposition that no lesson and no problem supports.

    Support is a lesson that refers to it (a `prop:` link or a plain "Prop. 2"), or a worked
    problem or exercise that lists it under `supports`. Drafts are not checked.

    Fails:
        status: published
        # no lesson mentions Prop. 2, no problem has supports: [2]
    Passes:
        status: published
        # problems/cost-at-fifty/problem.yaml has supports: [1, 2]
    """
    course = ctx.course
    supported: set[tuple[str, int]] = set()
    for chapter in course.chapters.values():  # each chapter read once, then kept by content
        found = _supports_summary(ctx, chapter)
        supported.update((str(target), int(number)) for target, number in found)
    for chapter in course.chapters.values():
        if chapter_status(chapter) != "published" or chapter_incomplete(chapter):
            continue  # (support from what did not load is unknown: its CK1xx error says why)
        # the numbers without the manifest (`chapter_outline`); it is read to report one
        for index, number in enumerate(chapter_outline(chapter)[2]):
            if (chapter.id, number) not in supported:
                yield Finding(
                    chapter.manifest.loc("propositions", index, "number"),
                    f"Prop. {number} of published {chapter.id} is supported by no lesson "
                    "and no problem; refer to it from a lesson or list it under `supports`",
                )
