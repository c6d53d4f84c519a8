"""Garbage collection while a load builds the course: few full collections, then frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from coursekit.load.yamlsafe import parsed_documents


@contextmanager
def long_lived() -> Iterator[None]:
    """Build objects that live as long as the run with few full collections walking them.

    A load makes some ten objects per line of YAML, and each full collection walks every live
    object. Built from the cache (an edit), a load makes no garbage cycles, and the one full
    collection the default thresholds still ran took 0.28 s of a 1.43 s load at 1,000
    chapters: none runs, nor any of the middle generation (~50, ~50 ms of a prose edit
    there). Parsing YAML does leave cycles (a cold load): once the load has parsed
    `PARSES_BEFORE_COLLECTING` documents, the middle generation is collected as usual again
    and full collections resume, a tenth as often as by default (~15 of them had doubled a
    cold load, 2.2 s against 1.1 s; none at all held its cycles to the end, +67 MB at 1,000
    chapters). The youngest generation is collected as usual throughout: its collections
    are what tell the load that parsing began. Afterwards the loaded objects are frozen
    (`gc.freeze`): later collections skip them. Frozen objects are still freed by reference
    counting, and a second load first unfreezes the first's (a long-running server reloads),
    so a cycle among them is collected in time.
    """
    gc.unfreeze()
    young, middle, old = gc.get_threshold()
    parsed_before = parsed_documents()
    resumed: list[bool] = []

    def resume_when_parsing(phase: str, info: dict[str, int]) -> None:
        # (not removed from gc.callbacks here: the collector is iterating over that list)
        if resumed or parsed_documents() - parsed_before < PARSES_BEFORE_COLLECTING:
            return
        resumed.append(True)
        gc.set_threshold(young, middle, FEW_FULL_COLLECTIONS)

    # the young collections go on (their callback sees parsing begin), the older ones wait
    gc.set_threshold(young, NO_OLDER_COLLECTION, NO_OLDER_COLLECTION)
    gc.callbacks.append(resume_when_parsing)
    try:
        yield
    finally:
        gc.freeze()
        gc.callbacks.remove(resume_when_parsing)
        gc.set_threshold(young, middle, old)


# gen1's and gen2's thresholds while loading (10 each by default): none while the documents
# come from the cache; gen1's as usual and a tenth of the full collections once the load
# parses YAML in earnest.
NO_OLDER_COLLECTION = 1 << 30
FEW_FULL_COLLECTIONS = 100
PARSES_BEFORE_COLLECTING = 100
