"""What is worked out once and remembered: by the identity of what it came from (`ByIdentity`),
or by a text's content (`per_text`).

The daemon and the language server check again and again a course most of whose objects
(texts, models, stored results) are the very objects of the last run: what was worked out
from one of them (a decoded row, a hash, a scan) need not be worked out again. A memo holds
the object itself, so its id is not reused while remembered, and forgets everything past
`limit` entries, so a long session does not keep every object it ever saw.

A memo remembers only once a process says it checks again and again (`remember()`: the
daemon's resident course, the language server). A one-shot `check` looks each object up once,
where holding on to it only costs: at 1,000 chapters the references kept made a fresh check
~60 ms slower (the collector walking them), for no hit.

A `per_text` cache (a lesson body's Markdown scan, its links, its maths) remembers in every
process, as `functools.lru_cache` does, and is emptied by `let_go_of_texts`: a run checking a
large course in batches of chapters lets go of a batch's before the next.

Standard library only: a leaf.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")

REMEMBERING = False  # see remember()


def remember() -> None:
    """From now on, memos remember: this process checks the same course again and again."""
    global REMEMBERING
    REMEMBERING = True


def remembering() -> bool:
    """Whether memos remember in this process (a caller whose `also` costs work to gather
    skips it when they do not)."""
    return REMEMBERING


class ByIdentity(Generic[V]):
    """`compute()`'s value for `subject`, remembered while `subject` is this very object and
    the values `also` depends on are equal to those it was worked out with."""

    def __init__(self, limit: int) -> None:
        self._held: dict[int, tuple[object, tuple[object, ...], V]] = {}
        self._limit = limit

    def get(self, subject: object, compute: Callable[[], V], *also: object) -> V:
        if not REMEMBERING:
            return compute()
        hit = self._held.get(id(subject))
        if hit is not None and hit[0] is subject and hit[1] == also:
            return hit[2]
        value = compute()
        if len(self._held) >= self._limit:
            self._held.clear()
        self._held[id(subject)] = (subject, also, value)
        return value


# The caches of what is worked out from one text (a lesson body's Markdown scan, its links, the
# maths it writes): `let_go_of_texts` empties them.
_TEXT_CACHES: list[Callable[[], None]] = []


def per_text(maxsize: int) -> Callable[[Callable[..., V]], functools._lru_cache_wrapper[V]]:
    """`functools.lru_cache(maxsize)` for a function of a text (or of a formula of one), whose
    cache `let_go_of_texts` empties: a run that checks a large course in batches of chapters
    lets go of a batch's before the next (coursekit.incremental)."""

    def wrap(function: Callable[..., V]) -> functools._lru_cache_wrapper[V]:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        _TEXT_CACHES.append(cached.cache_clear)
        return cached

    return wrap


def let_go_of_texts() -> None:
    """Empty every `per_text` cache: what they hold is worked out again when next asked for."""
    for clear in _TEXT_CACHES:
        clear()
