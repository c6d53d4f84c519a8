"""What one document asks to verify and what it is told, as plain data.

A :class:`MathsSpec` (frozen, JSON-serialisable: the assumptions, formulas, claims, labelled
equations, numbers written in the prose and numeric quiz answers of one document) goes to
:func:`coursekit.verify.runner.verify_document`, which returns a list of :class:`Verdict` (also
plain data). Both cross the fork to the workers and the cache, so nothing here holds a sympy
object; :meth:`MathsSpec.fingerprint` is the cache key.

Verdict ``status`` values (:data:`STATUSES`): ``ok``, ``false``, ``unproven`` (sympy could not
decide), ``error`` (malformed text; ``offset``/``field`` locate it), ``timeout``, ``crashed`` (the
worker died, ran out of memory, or sympy raised: not a verdict about the maths), ``missing`` (a
reference to a claim or formula that does not exist) and ``skipped`` (not checked because what it
depends on failed; a caller should not report these twice).  ``timeout`` and ``crashed`` depend on
the machine and the moment: a caller must not keep them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from coursekit.records import record
from coursekit.verify.claims import Claim
from coursekit.verify.status import STATUSES, SUBJECTS, VOLATILE, Status, Subject

#: Bump when a change to the engine can change a verdict (part of the fingerprint).
ENGINE_VERSION = "4"  # 4: a value claim with both sides exact is compared as fractions


@record(frozen=True)
class MathsSpec:
    """Everything one document asks to verify, as plain data.

    ``numbers`` are ``(claim_id, text as written)``; ``quiz`` entries are
    ``(claim_id, answer, margin)`` with numbers as text.  Build with :meth:`build`.
    """

    assume: tuple[tuple[str, tuple[str, ...]], ...] = ()
    formulas: tuple[tuple[str, str], ...] = ()
    claims: tuple[Claim, ...] = ()
    equations: tuple[tuple[str, str], ...] = ()
    numbers: tuple[tuple[str, str], ...] = ()
    quiz: tuple[tuple[str, str, str], ...] = ()
    #: (symbol, dimensions, axes or None) the notation declares, and the row-wise functions.
    shapes: tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...] = ()
    rowwise: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        *,
        assume: Mapping[str, Iterable[str]] | None = None,
        formulas: Mapping[str, object] | None = None,
        claims: Iterable[Claim | Mapping[str, Any]] = (),
        equations: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        numbers: Iterable[tuple[str, str]] = (),
        quiz: Iterable[tuple[str, object, object]] = (),
        shapes: Mapping[str, tuple[Iterable[object], Iterable[object] | None]] | None = None,
        rowwise: Iterable[str] = (),
    ) -> MathsSpec:
        """Normalise YAML-shaped input; an unreadable claim becomes :meth:`Claim.invalid`."""
        eqs = equations.items() if isinstance(equations, Mapping) else (equations or ())
        return cls(
            assume=tuple((str(k), tuple(str(n) for n in v)) for k, v in (assume or {}).items()),
            formulas=tuple(
                (str(k), v if isinstance(v, str) else str(v)) for k, v in (formulas or {}).items()
            ),
            claims=tuple(
                c
                if isinstance(c, Claim)
                else Claim.read(c, i)
                if isinstance(c, Mapping)
                else Claim.invalid(f"#{i + 1}", "a claim must be a mapping")
                for i, c in enumerate(claims)
            ),
            equations=tuple((str(k), str(v)) for k, v in eqs),
            numbers=tuple((str(c), str(t)) for c, t in numbers),
            quiz=tuple((str(c), str(a), str(m)) for c, a, m in quiz),
            shapes=tuple(
                (str(k), tuple(str(d) for d in dims), None if ax is None else tuple(map(str, ax)))
                for k, (dims, ax) in sorted((shapes or {}).items())
            ),
            rowwise=tuple(sorted(str(f) for f in rowwise)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "assume": [[k, list(v)] for k, v in self.assume],
            "formulas": [list(p) for p in self.formulas],
            "claims": [c.to_json() for c in self.claims],
            "equations": [list(p) for p in self.equations],
            "numbers": [list(p) for p in self.numbers],
            "quiz": [list(p) for p in self.quiz],
            **self._shapes_json(),
        }

    def _shapes_json(self) -> dict[str, Any]:
        # Absent when nothing is shaped, so a lesson without matrices keeps its fingerprint.
        out: dict[str, Any] = {}
        if self.shapes:
            out["shapes"] = [
                [k, list(d), None if a is None else list(a)] for k, d, a in self.shapes
            ]
        if self.rowwise:
            out["rowwise"] = list(self.rowwise)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MathsSpec:
        return cls(
            assume=tuple((k, tuple(v)) for k, v in data.get("assume", [])),
            formulas=tuple((k, v) for k, v in data.get("formulas", [])),
            claims=tuple(Claim.from_json(c) for c in data.get("claims", [])),
            equations=tuple((k, v) for k, v in data.get("equations", [])),
            numbers=tuple((k, v) for k, v in data.get("numbers", [])),
            quiz=tuple((c, a, m) for c, a, m in data.get("quiz", [])),
            shapes=tuple(
                (k, tuple(d), None if a is None else tuple(a)) for k, d, a in data.get("shapes", [])
            ),
            rowwise=tuple(data.get("rowwise", [])),
        )

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of the spec, the engine version and sympy's version.

        Verdicts depend on the time limit only through ``timeout`` verdicts: do not cache those
        (or add the limit to the key).
        """
        return digest({"engine": ENGINE_VERSION, "sympy": sympy_version(), "spec": self.to_json()})


def digest(payload: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``payload``: what a verdict's key is made of."""
    import hashlib

    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@record(frozen=True)
class Verdict:
    """The outcome of one check.

    ``subject`` is ``spec``, ``formula``, ``claim``, ``equation``, ``number`` or ``quiz``;
    ``key`` the formula name, claim id or equation label (for numbers and quiz answers, the claim
    id they cite); ``index`` the position among the spec's entries of that subject.
    """

    subject: Subject
    key: str
    index: int
    status: Status
    message: str
    offset: int | None = None
    field: str | None = None
    value: str | None = None
    seconds: float = dataclasses.field(default=0.0, compare=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(**data)


class Verifier(Protocol):
    """Somewhere else to verify specs (:mod:`coursekit.verify.server`): what
    ``verify_documents`` gives, or None when it cannot answer."""

    def verify(
        self, specs: Sequence[MathsSpec], timeout: float, *, memory_mb: int | None, workers: int
    ) -> list[list[Verdict]] | None: ...


@functools.cache
def sympy_version() -> str:
    """Read once per process: the metadata lookup parses a file (~1 ms, once per lesson)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sympy")
    except PackageNotFoundError:  # pragma: no cover
        return "none"


__all__ = ["ENGINE_VERSION", "STATUSES", "SUBJECTS", "VOLATILE", "MathsSpec", "Verdict"]
