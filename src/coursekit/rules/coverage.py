"""Verification coverage: per chapter, how many numbers, displays and orders are checked, given,
untied, false or unreadable. What `check --statistics` and `coursekit owed` show.

The account is structural (`coursekit.rules._accounting`); an identity in symbols is settled by
sympy when the formulas family ran in this run (`settled`), and counts as unreadable otherwise.
"""

from __future__ import annotations

from coursekit.model.tree import Course
from coursekit.rules._accounting import account
from coursekit.rules._displays import SETTLED
from coursekit.rules._items import KINDS, STATUSES, Item

Coverage = dict[str, dict[str, dict[str, int]]]  # chapter -> kind -> status -> count


def coverage(course: Course) -> Coverage:
    """The counts of every chapter, zeros included, in the course's chapter order."""
    settled = course.derived.get(SETTLED)
    items: tuple[Item, ...] = settled if isinstance(settled, tuple) else account(course)
    out: Coverage = {
        chapter: {kind: dict.fromkeys(STATUSES, 0) for kind in KINDS} for chapter in course.chapters
    }
    for item in items:
        if item.kind in KINDS and item.chapter in out:
            out[item.chapter][item.kind][item.status] += 1
    return out


def share(counts: dict[str, int]) -> tuple[int, int]:
    """(checked or given, total) of one kind's counts."""
    return counts["checked"] + counts["given"], sum(counts.values())
