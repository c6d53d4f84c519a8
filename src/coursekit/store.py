"""Where expensive results are kept between rules, runs and the editor: a leaf both loading and
judging use, so that loading never depends on the rule registry."""

from __future__ import annotations

from typing import Any, Protocol

#: Per lesson, what each of its sympy jobs came to (coursekit.verify.parts, read by
#: coursekit.rules._lesson_maths): read only when the lesson's maths changed.
SYMPY_PARTS = "sympy-parts"
#: Namespaces read one entry at a time, and only when what the entry describes changed: kept
#: on disk entry by entry, never in the pack of what a run reads (coursekit.cache_pack).
ENTRY_BY_ENTRY = frozenset({SYMPY_PARTS})


class ResultStore(Protocol):
    """Where expensive results (sympy verdicts, program outcomes) are kept, keyed by content.

    A key must capture everything the result depends on (the input's content, the tool's
    and libraries' versions, the limits); values are JSON-serialisable.
    """

    def get(self, namespace: str, key: str) -> Any | None: ...

    def put(self, namespace: str, key: str, value: Any) -> None: ...

    def decline(self, namespace: str, key: str, why: str) -> None:
        """Say that a result was computed but must not be kept: it depended on the clock (a
        timeout, a killed worker). A run that declined anything is not replayed either."""
        ...


class MemoryStore:
    """A store in memory: what one process keeps (a run without a cache, the editor)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Any] = {}
        self.declined: list[str] = []

    def decline(self, namespace: str, key: str, why: str) -> None:
        self._data.pop((namespace, key), None)
        self.declined.append(why)

    def get(self, namespace: str, key: str) -> Any | None:
        return self._data.get((namespace, key))

    def put(self, namespace: str, key: str, value: Any) -> None:
        self._data[(namespace, key)] = value


class RunStore(MemoryStore):
    """The store of a run given none (`check --no-cache`): dropped with the run, so nothing
    is kept in it for a later one (coursekit.incremental skips its per-chapter bookkeeping)."""


def carry(store: ResultStore, namespace: str, key: str) -> None:
    """Keep the entry for the next run without reading it now: a store that keeps what a run
    asked for (the pack: `PackedStore.carry`) keeps it as it was read, without unpacking it;
    any other store is asked for it (and keeps it, or holds it anyway)."""
    carrying = getattr(store, "carry", None)
    if carrying is None or not carrying(namespace, key):
        store.get(namespace, key)
