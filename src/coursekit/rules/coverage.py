"""Verification coverage: per chapter, how many numbers, displays and orders are checked, given,
untied, false or unreadable. What `check --statistics` and `coursekit owed` show.

The account is structural (`coursekit.rules._accounting`); an identity in symbols is settled by
sympy when the formulas family ran in this run (`settled`), and counts as unreadable otherwise.
"""

from __future__ import annotations

from dataclasses import replace

from coursekit.model.tree import Course
from coursekit.rules._accounting import chapter_account
from coursekit.rules._displays import settled, settled_of
from coursekit.rules._items import KINDS, STATUSES
from coursekit.rules.base import Context

Coverage = dict[str, dict[str, dict[str, int]]]  # chapter -> kind -> status -> count


def coverage(course: Course, ctx: Context | None = None) -> Coverage:
    """The counts of every chapter, zeros included, in the course's chapter order.

    With `ctx`, every chapter's identities are settled first (a run that kept most chapters'
    findings settled only the chapters it checked); without, those of a chapter not settled in
    this run count as they read before sympy."""
    if ctx is not None:
        settled(replace(ctx, only=None))
    out: Coverage = {
        chapter: {kind: dict.fromkeys(STATUSES, 0) for kind in KINDS} for chapter in course.chapters
    }
    items = [
        item
        for chapter in course.chapters.values()
        for item in settled_of(course, chapter.id) or chapter_account(course, chapter)
    ]
    for item in items:
        if item.kind in KINDS and item.chapter in out:
            out[item.chapter][item.kind][item.status] += 1
    return out


def share(counts: dict[str, int]) -> tuple[int, int]:
    """(checked or given, total) of one kind's counts."""
    return counts["checked"] + counts["given"], sum(counts.values())
