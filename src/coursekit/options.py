"""The run's switches, one typed object every layer may read (the command line builds it).

A leaf: standard library only, so the warm path can key its cache on it without importing the
engine. Each field says in its metadata whether it can change *what* a run reports: a field
marked `SPEED_ONLY` (how many workers, a progress bar) or `NOT_KEPT` (a hook, a sink for notes)
is left out of every cache key; every other field is in it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field, fields
from typing import Any, Protocol

from coursekit.records import record

# Metadata tags: why a field is not part of the cache key.
SPEED_ONLY = {"in_key": False, "why": "changes how fast, not what"}
NOT_KEPT = {"in_key": False, "why": "a callable or a sink: a run using it is not comparable"}

Progress = Callable[[int, int, object], None]


class Verifier(Protocol):
    """Where sympy runs for this check (coursekit.verify.server): `verify_documents` computed
    elsewhere, or None when it cannot be (the caller then verifies in-process)."""

    def start(self) -> None:
        """Get ready ahead of the first `verify` (the load has met claims no run has seen)."""

    def ahead(self, start: bool) -> None:
        """Start now, or not before the first `verify` whatever `start` is told later (what
        `check` settled from the edit before the load)."""

    def verify(
        self, specs: Sequence[Any], timeout: float, *, memory_mb: int | None, workers: int
    ) -> list[list[Any]] | None: ...


@record(frozen=True)
class Options:
    """How a check runs.

    `exec`: run worked-problem programs. `formulas`: verify formula claims with sympy (off for
    `--structural`). `jobs`: parallel workers (0: one per core). `progress`: called as programs
    finish. `notes`: a list rules append one-line remarks to, printed under the summary.
    `problem_confirmed`: a callable taking a `Problem` that overrides the programs' verdicts.
    `sympy`: a server to verify formulas in (`check` gives one that starts when first asked).
    """

    exec: bool = True
    formulas: bool = True
    jobs: int = field(default=0, metadata=SPEED_ONLY)
    progress: Progress | None = field(default=None, metadata=SPEED_ONLY)
    notes: list[str] | None = field(default=None, metadata=NOT_KEPT, compare=False)
    problem_confirmed: Callable[[Any], bool | None] | None = field(default=None, metadata=NOT_KEPT)
    sympy: Verifier | None = field(default=None, metadata=SPEED_ONLY, compare=False)

    def key(self) -> dict[str, Any]:
        """The fields that shape a run's result, as plain data for a cache key."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("in_key", True)
        }


def not_in_key() -> frozenset[str]:
    """The names of the fields no cache key includes."""
    return frozenset(f.name for f in fields(Options) if not f.metadata.get("in_key", True))
