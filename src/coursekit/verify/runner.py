"""Run every check of a document under a time limit, in a forked worker process.

:func:`verify_document` takes a :class:`MathsSpec` (plain, frozen, JSON-serialisable data: the
assumptions, formulas, claims, labelled equations, numbers written in the prose and numeric quiz
answers of one document) and returns a list of :class:`Verdict` (also plain data).

Isolation: the claims and equations are *jobs*.  A worker is forked (``os.fork``, after sympy has
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
import os
import select
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from coursekit.verify.expr import DEFAULT_LIMITS, FormulaError, Limits
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
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "assume": [[k, list(v)] for k, v in self.assume],
            "formulas": [list(p) for p in self.formulas],
            "claims": [c.to_json() for c in self.claims],
            "equations": [list(p) for p in self.equations],
            "numbers": [list(p) for p in self.numbers],
            "quiz": [list(p) for p in self.quiz],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MathsSpec:
        return cls(
            assume=tuple((k, tuple(v)) for k, v in data.get("assume", [])),
            formulas=tuple((k, v) for k, v in data.get("formulas", [])),
            claims=tuple(Claim.from_json(c) for c in data.get("claims", [])),
            equations=tuple((k, v) for k, v in data.get("equations", [])),
            numbers=tuple((k, v) for k, v in data.get("numbers", [])),
            quiz=tuple((c, a, m) for c, a, m in data.get("quiz", [])),
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


# -- isolation ------------------------------------------------------------------------------------

Job = Callable[[], CheckResult]


def _result_json(res: CheckResult) -> dict[str, Any]:
    return {
        "status": res.status,
        "message": res.message,
        "offset": res.offset,
        "field": res.field,
        "value": res.value,
    }


def _safe(job: Job) -> CheckResult:
    try:
        return job()
    except FormulaError as exc:
        return CheckResult("error", exc.message, offset=exc.offset, field=exc.source)
    except MemoryError:
        return CheckResult("crashed", "ran out of memory")
    except RecursionError:
        return CheckResult("crashed", "sympy ran out of recursion depth")
    except Exception as exc:  # any failure inside sympy is reported as such, never as a pass
        return CheckResult("crashed", f"sympy raised {type(exc).__name__}: {exc}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _child(fd: int, jobs: Sequence[Job], first: int, memory_mb: int | None) -> None:
    if memory_mb is not None:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for i in range(first, len(jobs)):
        _write_all(fd, (json.dumps({"start": i}) + "\n").encode())
        t0 = time.perf_counter()
        res = _safe(jobs[i])
        msg = {"done": i, "result": _result_json(res), "seconds": time.perf_counter() - t0}
        _write_all(fd, (json.dumps(msg) + "\n").encode())


def _timeout_text(timeout: float) -> str:
    return f"timed out after {timeout:g} s"


def run_isolated(
    jobs: Sequence[Job], timeout: float, *, memory_mb: int | None = None
) -> list[tuple[CheckResult, float]]:
    """Run ``jobs`` in forked workers, each job under ``timeout`` seconds.

    Returns one ``(result, seconds)`` per job, in order.  Falls back to :func:`run_inline` where
    ``os.fork`` does not exist.
    """
    if not hasattr(os, "fork"):  # pragma: no cover - not Linux/macOS
        return run_inline(jobs, timeout)
    results: dict[int, tuple[CheckResult, float]] = {}
    next_job = 0
    while next_job < len(jobs):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            try:
                os.close(read_fd)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                _child(write_fd, jobs, next_job, memory_mb)
            finally:
                os._exit(0)
        os.close(write_fd)
        try:
            next_job = _supervise(read_fd, pid, next_job, len(jobs), timeout, results)
        finally:
            os.close(read_fd)
            _reap(pid)
    return [results[i] for i in range(len(jobs))]


def _reap(pid: int) -> int | None:
    """Kill (if still running) and wait for the worker; return its exit status."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        return status
    except ChildProcessError:
        return None


def _supervise(
    fd: int,
    pid: int,
    first: int,
    count: int,
    timeout: float,
    results: dict[int, tuple[CheckResult, float]],
) -> int:
    """Read the worker's reports until it finishes, dies or overruns; return the next job."""
    buffer = b""
    current = first
    started = time.monotonic()
    while True:
        remaining = started + timeout - time.monotonic()
        if remaining <= 0:
            os.kill(pid, signal.SIGKILL)
            results[current] = (CheckResult("timeout", _timeout_text(timeout)), timeout)
            return current + 1
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:  # the worker exited (normally, or killed by a limit)
            status = _reap(pid)
            if current >= count:
                return count
            results[current] = (CheckResult("crashed", _death(status)), time.monotonic() - started)
            return current + 1
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            msg = json.loads(line)
            if "start" in msg:
                current = int(msg["start"])
                started = time.monotonic()
            else:
                i = int(msg["done"])
                r = msg["result"]
                results[i] = (
                    CheckResult(r["status"], r["message"], r["offset"], r["field"], r["value"]),
                    msg["seconds"],
                )
                current = i + 1
                started = time.monotonic()


def _death(status: int | None) -> str:
    """What killed a worker, in words (SIGKILL is what the kernel's OOM killer sends)."""
    if status is not None and os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the worker died: killed by {name}"
    if status is not None and os.WIFEXITED(status):
        return f"the worker died: it exited with status {os.WEXITSTATUS(status)}"
    return "the worker died"


def run_inline(jobs: Sequence[Job], timeout: float) -> list[tuple[CheckResult, float]]:
    """Run in this process; the limit uses SIGALRM when on the main thread, else none."""
    import threading

    out: list[tuple[CheckResult, float]] = []
    use_alarm = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )

    class _Overrun(BaseException):
        pass

    def on_alarm(signum: int, frame: object) -> None:
        raise _Overrun

    for job in jobs:
        t0 = time.perf_counter()
        old: Any = None
        try:
            if use_alarm:
                old = signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            res = _safe(job)
        except _Overrun:
            res = CheckResult("timeout", _timeout_text(timeout))
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
        out.append((res, time.perf_counter() - t0))
    return out


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

    Verdicts come in a fixed order: spec, formulas, claims, equations, numbers, quiz.
    """
    out: list[Verdict] = []
    try:
        ctx = Context(dict(spec.assume), dict(spec.formulas), limits=limits)
    except FormulaError as exc:
        out.append(Verdict("spec", "assume", 0, "error", exc.message, field="assume"))
        out.extend(_skip_all(spec, "the assumptions have an error"))
        return out

    for i, (name, _text) in enumerate(spec.formulas):
        err = ctx.errors.get(name)
        if err is None:
            out.append(Verdict("formula", name, i, "ok", f"{name} parses"))
        else:
            out.append(
                Verdict("formula", name, i, "error", err.message, offset=err.offset, field=name)
            )

    jobs: list[Job] = []
    owners: list[tuple[Subject, str, int]] = []
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

    if jobs and isolate:
        from coursekit.verify.symbolic import sympy_module

        _warm(sympy_module())  # once here, so every forked worker starts warm
        ran = run_isolated(jobs, timeout, memory_mb=memory_mb)
    else:
        ran = run_inline(jobs, timeout)
    done: dict[tuple[str, int], Verdict] = dict(pre)
    for (subject, key, index), (res, secs) in zip(owners, ran, strict=True):
        done[(subject, index)] = Verdict(
            subject, key, index, res.status, res.message, res.offset, res.field, res.value, secs
        )
    for i in range(len(spec.claims)):
        out.append(done[("claim", i)])
    for j in range(len(spec.equations)):
        out.append(done[("equation", j)])

    claim_verdicts = {v.key: v for v in out if v.subject == "claim" and v.field != "id"}
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


_WARM: list[bool] = []


def _warm(sp: Any) -> None:
    """Exercise sympy once in this process: its first simplify/solve loads much lazily."""
    if _WARM:
        return
    _WARM.append(True)
    try:
        t, d = sp.symbols("t d", positive=True)
        sp.simplify(sp.cancel(t**2 * d / (t * d**2) - d / t))
        sp.solve(sp.Eq(t**2 * d, t * d**2), t)
        sp.factor(t * d - t**2)
        sp.limit(t / (t + 1), t, sp.oo)
    except Exception:  # warming is an optimisation only
        pass


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
    "run_inline",
    "run_isolated",
    "verify_document",
]


@functools.cache
def _sympy_version() -> str:
    """Read once per process: the metadata lookup parses a file (~1 ms, once per lesson)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sympy")
    except PackageNotFoundError:  # pragma: no cover
        return "none"
