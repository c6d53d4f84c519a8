"""Run every check of a document under a time limit, in a forked worker process.

:func:`verify_document` takes a :class:`MathsSpec` and returns a list of :class:`Verdict` (both
plain data, :mod:`coursekit.verify.spec`, where the verdict statuses are listed).

Isolation (:mod:`coursekit.verify.isolation`): the claims and equations are *jobs*.  A worker is forked (``os.fork``, after sympy has
been imported once in the parent so a re-fork costs milliseconds) and runs the jobs in order,
reporting ``start i`` and ``done i`` over a pipe.  The parent waits with ``select`` on a per-job
deadline; a job that overruns it is ended with ``SIGKILL`` and recorded as ``timeout`` ("timed out
after N s"), and a fresh worker continues with the next job.  A worker that dies (a crash, the
optional memory limit) costs only the job it was running.  Nothing can hang the caller.

Formula syntax, numbers in the prose and quiz answers need no sympy: they are checked in the
parent (the last two against the values the claim jobs computed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coursekit.records import record
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
from coursekit.verify.parts import Owner, Parts, job_keys, pending_spec, recall, remembered
from coursekit.verify.spec import ENGINE_VERSION, MathsSpec, Verdict, Verifier
from coursekit.verify.status import STATUSES, SUBJECTS, VOLATILE, Subject

DEFAULT_TIMEOUT = 5.0


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
    server: Verifier | None = None,
    parts: Sequence[Parts] | None = None,
) -> list[list[Verdict]]:
    """:func:`verify_document` for each spec, with the sympy jobs of all of them shared out
    across ``workers`` forked workers at once (one list of verdicts per spec, in order).

    The verdicts are the same whatever ``workers`` is: each job's result depends on the job
    alone, and every job keeps its own time and memory limit. With a ``server``
    (:mod:`coursekit.verify.server`) they are computed there, or here when it cannot answer.
    With ``parts`` (one per spec, :mod:`coursekit.verify.parts`) only the jobs they hold no
    result for run, and each is then set to what to keep of its spec.
    """
    if parts is not None and limits == DEFAULT_LIMITS:
        how = {"isolate": isolate, "memory_mb": memory_mb, "workers": workers, "server": server}
        return _verify_remembering(specs, parts, timeout, how)
    if server is not None and isolate and limits == DEFAULT_LIMITS:
        served = server.verify(specs, timeout, memory_mb=memory_mb, workers=workers)
        if served is not None:
            return served
    planned = [_prepare(spec, limits) for spec in specs]
    jobs: list[Job] = [job for plan in planned for job in plan.jobs]
    if jobs and isolate:
        from coursekit.verify.symbolic import sympy_module

        sympy = sympy_module()  # imported once here, before the workers fork
        if len(jobs) > max(1, workers):
            # Warm (its first simplify and solve load much lazily) only where a worker will
            # run several jobs: a one-claim edit would pay for machinery it never uses.
            warm(sympy)
        ran = run_isolated(jobs, timeout, memory_mb=memory_mb, workers=workers)
    else:
        ran = run_inline(jobs, timeout)
    out: list[list[Verdict]] = []
    first = 0
    for plan in planned:
        out.append(plan.finish(ran[first : first + len(plan.jobs)]))
        first += len(plan.jobs)
    return out


def _verify_remembering(
    specs: Sequence[MathsSpec], parts: Sequence[Parts], timeout: float, how: dict[str, Any]
) -> list[list[Verdict]]:
    """`verify_documents`, running only the jobs ``parts`` knows nothing of (in one batch,
    as the specs of those jobs alone), then setting each of ``parts`` to what to keep."""
    planned = [_prepare(spec, DEFAULT_LIMITS) for spec in specs]
    keys = [job_keys(p.spec, p.owners) for p in planned]
    found = [
        recall(p.spec, p.owners, k, kept) for p, k, kept in zip(planned, keys, parts, strict=True)
    ]
    pending = [pending_spec(p.spec, p.owners, f) for p, f in zip(planned, found, strict=True)]
    todo = [spec for spec in pending if spec is not None]
    fresh = iter(verify_documents(todo, timeout, **how) if todo else [])
    out: list[list[Verdict]] = []
    for plan, known, rest, kept, k in zip(planned, found, pending, parts, keys, strict=True):
        ran_now = iter(_job_results(next(fresh)) if rest is not None else [])
        ran = [(res, 0.0) if res is not None else next(ran_now) for res in known]
        out.append(plan.finish(ran))
        now = remembered(k, [res for res, _ in ran], kept)
        kept.results, kept.values = now.results, now.values
    return out


def _job_results(verdicts: Sequence[Verdict]) -> list[tuple[CheckResult, float]]:
    """What each job of a spec came to, in the order it planned them (claims, equations)."""
    return [
        (CheckResult(v.status, v.message, v.offset, v.field, v.value), v.seconds)
        for v in verdicts
        if v.subject in ("claim", "equation")
    ]


@record
class _Planned:
    """One document before its sympy jobs run: what is known already, and the jobs."""

    spec: MathsSpec
    head: list[Verdict]  # the spec's and the formulas' verdicts
    jobs: list[Job]
    owners: list[Owner]
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


def _plan(
    spec: MathsSpec, ctx: Context
) -> tuple[list[Job], list[Owner], dict[tuple[str, int], Verdict]]:
    """The sympy jobs to run, whom each reports for, and the verdicts known without running any."""
    jobs: list[Job] = []
    owners: list[Owner] = []
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
