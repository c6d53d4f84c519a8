"""Maturity and owed content (CK7xx): a published chapter owes nothing; a draft may.

The counting lives in `coursekit.owed`; `owed_of` below is the one way into it, for these rules
and for `coursekit owed` alike, so both give the same answer about every problem. Whether a
problem's program confirms its published solution is the problem family's verdict (CK9xx, which
runs the programs once per run and caches the outcomes); `options.problem_confirmed` (a
callable taking a `Problem`) overrides it. Without a verdict (`--no-exec`), a problem counts when
its program exists and its solution is published, and is tallied as unverified.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from coursekit.model.tree import Chapter, Problem
from coursekit.owed import ChapterOwed, Count, CourseOwed, chapter_owed, course_owed
from coursekit.rules._broken import chapter_incomplete
from coursekit.rules._displays import settled
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.coverage import coverage
from coursekit.rules.facts import unsteady

# The problem family runs the programs once per check and memoises the verdicts.
from coursekit.rules.problems import problem_confirmed
from coursekit.written import Confirmed, stubs_of


def confirmed_by(ctx: Context) -> Confirmed | None:
    """The verdict on each problem's program for this run (None inside: not run)."""
    hook = ctx.options.problem_confirmed
    if hook is not None:
        return hook

    def confirmed(problem: Problem) -> bool | None:
        return problem_confirmed(ctx, problem.path)

    return confirmed


def owed_of(ctx: Context, chapter_ids: list[str] | None = None) -> CourseOwed:
    """What every chapter owes, with this run's program verdicts: what `coursekit owed` shows."""
    owed = course_owed(ctx.course, confirmed_by(ctx), chapter_ids)
    settled(ctx)  # identities in symbols settled by sympy (when formulas are on)
    counts = coverage(ctx.course)
    chapters = [
        replace(chapter, coverage=counts[chapter.id]) if chapter.id in counts else chapter
        for chapter in owed.chapters
    ]
    return replace(owed, chapters=chapters)


# What a published chapter owes reads, besides its own files and its programs' verdicts.
_OWED_FACTS = ("course_ladder", "apparatus_linked")


def _published(ctx: Context) -> Iterator[tuple[Chapter, ChapterOwed]]:
    for chapter in ctx.chapters():
        if ctx.options.problem_confirmed is not None:
            unsteady(ctx.course, chapter.id)  # a hook's verdicts are no fact to keep
        # what did not load cannot be counted (its CK1xx error says why): no owed echo of it
        if chapter.manifest.status == "published" and not chapter_incomplete(chapter):
            yield chapter, chapter_owed(ctx.course, chapter, confirmed_by(ctx))


def _short(count: Count, what: str) -> str:
    return f"{count.written}/{count.required} {what}, owes {count.owed}"


def _deficits(ctx: Context, count: str, key: str, what: str) -> Iterator[Finding]:
    """One finding per published chapter short of `count`, on the manifest's `key`."""
    for chapter, owed in _published(ctx):
        short: Count = getattr(owed, count)
        if short.owed:
            yield Finding(
                chapter.manifest.key_loc(key),
                f"published {chapter.id} at {owed.maturity} has {_short(short, what)}",
            )


@rule("CK701", "published-strand-owed", per_chapter=_OWED_FACTS)
def published_strand_owed(ctx: Context) -> Iterator[Finding]:
    """A published chapter has fewer written lessons in a strand than its maturity requires.

    Strands owe separately: a surplus in one never pays for another. Planned items do not
    count. A draft is never failed for this; `coursekit owed` reports it.

    Fails:
        maturity: M2          # requires theory: 2
        status: published     # and one theory lesson is written
    Passes:
        maturity: M2
        status: draft
    """
    for chapter, owed in _published(ctx):
        for strand, count in owed.strands.items():
            if count.owed:
                yield Finding(
                    chapter.manifest.loc("status"),
                    f"published {chapter.id} at {owed.maturity} has "
                    f"{_short(count, strand + ' lessons')}; write them or set `status: draft`",
                )


@rule("CK702", "published-problems-owed", per_chapter=_OWED_FACTS)
def published_problems_owed(ctx: Context) -> Iterator[Finding]:
    """A published chapter has fewer worked problems than its maturity requires.

    A problem counts only with a published solution and a program that confirms it.

    Fails:
        maturity: M2          # requires 3 problems
        status: published
        problems: [cost-at-fifty]
    Passes:
        maturity: M2
        status: published
        problems: [cost-at-fifty, cost-at-a-thousand, crossing]
    """
    yield from _deficits(ctx, "problems", "problems", "worked problems")


@rule("CK703", "published-variants-owed", per_chapter=_OWED_FACTS)
def published_variants_owed(ctx: Context) -> Iterator[Finding]:
    """A published chapter's written problems cover fewer distinct variants than required.

    Problems of one `variant` are the same exercise with other numbers; each new problem can
    bring one new variant.

    Fails:
        # requires 3 variants; the three problems all have variant: cost-count
    Passes:
        # variants cost-count, crossing and ratio
    """
    yield from _deficits(ctx, "variants", "problems", "distinct problem variants")


@rule("CK704", "published-exercises-owed", per_chapter=_OWED_FACTS)
def published_exercises_owed(ctx: Context) -> Iterator[Finding]:
    """A published chapter has fewer exercises (with published solutions) than required.

    Fails:
        maturity: M2          # requires 6 exercises
        status: published
        exercises: [row-sums]
    Passes:
        maturity: M2
        status: draft
        exercises: [row-sums]
    """
    yield from _deficits(ctx, "exercises", "exercises", "exercises")


@rule("CK705", "published-apparatus-planned", per_chapter=_OWED_FACTS)
def published_apparatus_planned(ctx: Context) -> Iterator[Finding]:
    """A published chapter links a Book 0 entry that is only planned (owed content).

    Fails:
        status: published
        apparatus: [{id: 0.IT.02}]   # status: planned in 0/book.yaml
    Passes:
        status: published
        apparatus: [{id: 0.IT.01}]   # status: written
    """
    for chapter, owed in _published(ctx):
        for index, link in enumerate(chapter.manifest.apparatus):
            if link.id in owed.planned_apparatus:
                yield Finding(
                    chapter.manifest.loc("apparatus", index, "id"),
                    f"published {chapter.id} links '{link.id}', which Book 0 only plans; "
                    "write the entry or set `status: draft`",
                )


@rule("CK706", "published-stub", per_chapter=())
def published_stub(ctx: Context) -> Iterator[Finding]:
    """A published chapter lists a lesson, problem or exercise still marked `status: stub`.

    `coursekit new` writes placeholders marked `status: stub`; they are owed, never counted as
    written, until the author writes them and removes the marker. A published chapter holds
    no placeholder, even when it has enough written items besides.

    Fails:
        ---
        title: Masks
        strand: mathematics
        status: stub          # in a lesson of a published chapter
        ---
    Passes:
        ---
        title: Masks
        strand: mathematics
        ---
    """
    for chapter in ctx.chapters():
        if chapter.manifest.status != "published":
            continue
        for path, meta in stubs_of(chapter):
            yield Finding(
                meta.loc("status"),
                f"published {chapter.id} lists {path}, still `status: stub`; write it and "
                "remove the marker, or set the chapter's `status: draft`",
                related=(chapter.path,),
            )
