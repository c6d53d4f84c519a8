"""Jobs run under a time limit: in forked workers (:func:`run_isolated`) or in-process (:func:`run_inline`).

A *job* is a callable returning a :class:`~coursekit.verify.claims.CheckResult`.  A forked worker
runs the jobs in order, reporting ``start i`` and ``done i`` as JSON lines over a pipe; the parent
waits with ``select`` on a per-job deadline, ends an overrunning worker with ``SIGKILL`` and forks
a fresh one for the next job.  A worker that dies costs only the job it was running.  Any
exception a job raises becomes a ``crashed`` or ``error`` result, never a pass.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from coursekit.verify.claims import CheckResult
from coursekit.verify.expr import FormulaError

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


_WARM: list[bool] = []


def warm(sp: Any) -> None:
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


__all__ = ["Job", "run_inline", "run_isolated", "warm"]
