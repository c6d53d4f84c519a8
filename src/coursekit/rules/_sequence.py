"""Numbered things (propositions, figures) run 1..n in order: where a sequence breaks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def breaks(numbers: Sequence[int]) -> Iterator[tuple[int, int, str]]:
    """(index, expected number, why) for each number out of place."""
    seen: set[int] = set()
    for index, number in enumerate(numbers):
        expected = index + 1
        if number != expected:
            yield index, expected, "is used twice" if number in seen else "breaks the sequence"
        seen.add(number)
