"""Run every check of a document under a time limit, in a forked worker process.

:func:`verify_document` takes a :class:`MathsSpec` (plain, frozen, JSON-serialisable data: the
assumptions, formulas, claims, labelled equations, numbers written in the prose and numeric quiz
answers of one document) and returns a list of :class:`Verdict` (also plain data).

Isolation (:mod:`coursekit.verify.isolation`): the claims and equations are *jobs*.  A worker is forked (``os.fork``, after sympy has
been imported once in the parent so a re-fork costs milliseconds) and runs the jobs in order,
reporting ``start i`` and ``done i`` over a pipe.  The parent waits with ``select`` on a per-job
deadline; a job that overruns it is ended with ``SIGKILL`` and recorded as ``timeout`` ("timed out
after N s"), and a fresh worker continues with the next job.  A worker that dies (a crash, the
optional memory limit) costs only the job it was running.  Nothing can hang the caller.

Formula syntax, numbers in the prose and quiz answers need no sympy: they are checked in the
parent (the last two against the values the claim jobs computed).

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
from dataclasses import asdict, dataclass
from typing import Any

from coursekit.verify.claims import (
    CheckResult,
    Claim,
    Context,
    check_claim,
    check_equation_latex,
    check_number,
    check_quiz_answer,
)
from coursekit.verify.claims.shape import shape_verdicts
from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits
from coursekit.verify.isolation import Job, run_inline, run_isolated, warm
from coursekit.verify.status import STATUSES, SUBJECTS, VOLATILE, Status, Subject

#: Bump when a change to the engine can change a verdict (part of the fingerprint).
ENGINE_VERSION = "2"
DEFAULT_TIMEOUT = 5.0


@dataclass(frozen=True)
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
        import hashlib

        payload = {"engine": ENGINE_VERSION, "sympy": _sympy_version(), "spec": self.to_json()}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
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


# -- the document ---------------------------------------------------------------------------------


def verify_document(
    spec: MathsSpec,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    isolate: bool = True,
    memory_mb: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> list[Verdict]:
    """Check everything in ``spec``; every sympy job runs under ``timeout`` seconds.

    Verdicts come in a fixed order: spec, formulas, shapes, claims, equations, numbers, quiz.
    """
    (verdicts,) = verify_documents(
        [spec], timeout, isolate=isolate, memory_mb=memory_mb, limits=limits
    )
    return verdicts


def verify_documents(
    specs: Sequence[MathsSpec],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    isolate: bool = True,
    memory_mb: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    workers: int = 1,
) -> list[list[Verdict]]:
    """:func:`verify_document` for each spec, with the sympy jobs of all of them shared out
    across ``workers`` forked workers at once (one list of verdicts per spec, in order).

    The verdicts are the same whatever ``workers`` is: each job's result depends on the job
    alone, and every job keeps its own time and memory limit.
    """
    planned = [_prepare(spec, limits) for spec in specs]
    jobs: list[Job] = [job for plan in planned for job in plan.jobs]
    if jobs and isolate:
        from coursekit.verify.symbolic import sympy_module

        warm(sympy_module())  # once here, so every forked worker starts warm
        ran = run_isolated(jobs, timeout, memory_mb=memory_mb, workers=workers)
    else:
        ran = run_inline(jobs, timeout)
    out: list[list[Verdict]] = []
    first = 0
    for plan in planned:
        out.append(plan.finish(ran[first : first + len(plan.jobs)]))
        first += len(plan.jobs)
    return out


@dataclass
class _Planned:
    """One document before its sympy jobs run: what is known already, and the jobs."""

    spec: MathsSpec
    head: list[Verdict]  # the spec's and the formulas' verdicts
    jobs: list[Job]
    owners: list[_Owner]
    pre: dict[tuple[str, int], Verdict]
    done: bool = False  # the assumptions failed: ``head`` is the whole answer

    def finish(self, ran: Sequence[tuple[CheckResult, float]]) -> list[Verdict]:
        out = list(self.head)
        if self.done:
            return out
        done: dict[tuple[str, int], Verdict] = dict(self.pre)
        for (subject, key, index), (res, secs) in zip(self.owners, ran, strict=True):
            done[(subject, index)] = Verdict(
                subject, key, index, res.status, res.message, res.offset, res.field, res.value, secs
            )
        for i in range(len(self.spec.claims)):
            out.append(done[("claim", i)])
        for j in range(len(self.spec.equations)):
            out.append(done[("equation", j)])
        out.extend(_derived_verdicts(self.spec, out))
        return out


def _prepare(spec: MathsSpec, limits: Limits) -> _Planned:
    try:
        ctx = Context(
            dict(spec.assume),
            dict(spec.formulas),
            limits=limits,
            shapes={k: (d, a) for k, d, a in spec.shapes},
            rowwise=spec.rowwise,
        )
    except FormulaError as exc:
        head = [Verdict("spec", "assume", 0, "error", exc.message, field="assume")]
        head.extend(_skip_all(spec, "the assumptions have an error"))
        return _Planned(spec, head, [], [], {}, done=True)
    head = []
    for i, (name, _text) in enumerate(spec.formulas):
        err = ctx.errors.get(name)
        if err is None:
            head.append(Verdict("formula", name, i, "ok", f"{name} parses"))
        else:
            head.append(
                Verdict("formula", name, i, "error", err.message, offset=err.offset, field=name)
            )
    head.extend(
        Verdict("shape", name, i, status, message, offset=offset, field=name)
        for name, i, status, message, offset in shape_verdicts(ctx)
    )
    jobs, owners, pre = _plan(spec, ctx)
    return _Planned(spec, head, jobs, owners, pre)


#: Who each job reports for: (subject, key, index).
_Owner = tuple[Subject, str, int]


def _plan(
    spec: MathsSpec, ctx: Context
) -> tuple[list[Job], list[_Owner], dict[tuple[str, int], Verdict]]:
    """The sympy jobs to run, whom each reports for, and the verdicts known without running any."""
    jobs: list[Job] = []
    owners: list[_Owner] = []
    seen: dict[str, int] = {}
    pre: dict[tuple[str, int], Verdict] = {}
    for i, claim in enumerate(spec.claims):
        if claim.id in seen:
            pre[("claim", i)] = Verdict(
                "claim",
                claim.id,
                i,
                "error",
                f"duplicate claim id {claim.id!r} (first at #{seen[claim.id] + 1})",
                field="id",
            )
            continue
        seen[claim.id] = i
        jobs.append(_claim_job(ctx, claim))
        owners.append(("claim", claim.id, i))
    for j, (label, latex) in enumerate(spec.equations):
        if label not in ctx.texts:
            pre[("equation", j)] = Verdict(
                "equation", label, j, "missing", f"no formula named {label!r} to compare with"
            )
            continue
        if label in ctx.errors:
            pre[("equation", j)] = Verdict(
                "equation", label, j, "skipped", f"formula {label!r} has an error"
            )
            continue
        jobs.append(_equation_job(ctx, latex, label))
        owners.append(("equation", label, j))
    return jobs, owners, pre


def _derived_verdicts(spec: MathsSpec, checked: Sequence[Verdict]) -> list[Verdict]:
    """Numbers in the prose and quiz answers, judged against the values the claims computed."""
    out: list[Verdict] = []
    claim_verdicts = {v.key: v for v in checked if v.subject == "claim" and v.field != "id"}
    claims_by_id = {c.id: c for c in spec.claims}
    for k, (cid, text) in enumerate(spec.numbers):
        out.append(_number_verdict(k, cid, text, claim_verdicts.get(cid), claims_by_id.get(cid)))
    for k, (cid, answer, margin) in enumerate(spec.quiz):
        cv = claim_verdicts.get(cid)
        pending = _pending("quiz", k, cid, cv)
        if pending is not None:
            out.append(pending)
            continue
        assert cv is not None and cv.value is not None
        res = check_quiz_answer(answer, margin, cv.value, subject=f"claim {cid}")
        out.append(Verdict("quiz", cid, k, res.status, res.message, value=res.value))
    return out


def _pending(subject: Subject, index: int, cid: str, cv: Verdict | None) -> Verdict | None:
    if cv is None:
        return Verdict(subject, cid, index, "missing", f"no claim with id {cid!r}")
    if cv.value is None:
        if cv.status in ("error", "timeout", "crashed", "skipped", "unproven"):
            return Verdict(
                subject, cid, index, "skipped", f"claim {cid!r} was not checked ({cv.status})"
            )
        return Verdict(
            subject, cid, index, "error", f"claim {cid!r} computes no single number to compare with"
        )
    return None


def _number_verdict(
    k: int, cid: str, text: str, cv: Verdict | None, claim: Claim | None
) -> Verdict:
    pending = _pending("number", k, cid, cv)
    if pending is not None:
        return pending
    assert cv is not None and cv.value is not None
    tol = claim.tolerance if claim is not None else None
    res = check_number(text, cv.value, tolerance=tol, subject=f"claim {cid}")
    return Verdict("number", cid, k, res.status, res.message, value=res.value)


def _claim_job(ctx: Context, claim: Claim) -> Job:
    return lambda: check_claim(ctx, claim)


def _equation_job(ctx: Context, latex: str, label: str) -> Job:
    return lambda: check_equation_latex(latex, label, ctx, name=label)


def _skip_all(spec: MathsSpec, why: str) -> list[Verdict]:
    out = [Verdict("claim", c.id, i, "skipped", why) for i, c in enumerate(spec.claims)]
    out += [Verdict("equation", k, j, "skipped", why) for j, (k, _) in enumerate(spec.equations)]
    out += [Verdict("number", c, k, "skipped", why) for k, (c, _) in enumerate(spec.numbers)]
    out += [Verdict("quiz", c, k, "skipped", why) for k, (c, _, _) in enumerate(spec.quiz)]
    return out


__all__ = [
    "DEFAULT_TIMEOUT",
    "ENGINE_VERSION",
    "STATUSES",
    "SUBJECTS",
    "VOLATILE",
    "MathsSpec",
    "Verdict",
    "verify_document",
    "verify_documents",
]


@functools.cache
def _sympy_version() -> str:
    """Read once per process: the metadata lookup parses a file (~1 ms, once per lesson)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sympy")
    except PackageNotFoundError:  # pragma: no cover
        return "none"
