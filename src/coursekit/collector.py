"""The cyclic garbage collector held off through a `check` that makes next to no cycles.

A `check` after an edit builds the course from the cache (no cycles: coursekit.framed, the
load's `long_lived`), runs the rules on the chapters the edit touched and reports: what it
makes is freed by reference counting, yet each 700 allocations still set off a collection of
the youngest generation, and some of the middle one (~260 at 1,000 chapters, ~13-20 ms of a
0.55 s prose edit). The run is `held` without them. Work that does make cycles in earnest
lets go of the hold (`release`) and the collector runs as usual from there: parsing YAML
(`PARSES` documents: a cold load, a first run; the load's own schedule then applies), and
rules run over more than `FEW_CHAPTERS` chapters (a Book 0 entry that many link, a first run).

Standard library only: a leaf.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

PARSES = 100  # YAML documents parsed under a hold before it is let go of
FEW_CHAPTERS = 10  # chapters the rules may run on under a hold

_held = [False]  # whether `held` turned the collector off and no `release` turned it on
_parsed = [0]  # documents parsed under the hold


@contextmanager
def held() -> Iterator[None]:
    """The block run with the collector off (unless it was off already, or `release` turns it
    back on meanwhile); on again afterwards, for whatever the process does next."""
    if not gc.isenabled() or _held[0]:
        yield
        return
    gc.disable()
    _held[0], _parsed[0] = True, 0
    try:
        yield
    finally:
        release()


def release() -> None:
    """Turn the collector back on, when `held` turned it off."""
    if _held[0]:
        _held[0] = False
        gc.enable()


def parsed() -> None:
    """One more YAML document parsed: from `PARSES` under a hold, the hold is let go of."""
    if _held[0]:
        _parsed[0] += 1
        if _parsed[0] >= PARSES:
            release()


def running_rules_on(chapters: int) -> None:
    """The rules are about to run on this many chapters: more than `FEW_CHAPTERS` lets go of
    a hold (their Markdown trees and verdicts make cycles as a cold run's do)."""
    if chapters > FEW_CHAPTERS:
        release()


def holding() -> bool:
    return _held[0]
