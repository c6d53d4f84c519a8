"""Jobs run under a time limit: in forked workers (:func:`run_isolated`) or in-process (:func:`run_inline`).

A *job* is a callable returning a :class:`~coursekit.verify.claims.CheckResult`.  Up to
``workers`` forked workers run at once; the parent hands each one job index at a time over a
pipe, and the worker reports ``start i`` and ``done i`` as JSON lines over another.  The parent
waits with ``select`` on every worker's per-job deadline, ends an overrunning worker with
``SIGKILL`` and forks a fresh one for the jobs still to run.  A worker that dies costs only the
job it was running.  Any exception a job raises becomes a ``crashed`` or ``error`` result, never
a pass; results come back in the order of the jobs, whoever ran them.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from coursekit.records import record
from coursekit.verify.claims import CheckResult
from coursekit.verify.expr import FormulaError

Job = Callable[[], CheckResult]


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


def _child(orders: int, reports: int, jobs: Sequence[Job], memory_mb: int | None) -> None:
    """Run the job whose index arrives on ``orders``, one at a time, until it is closed."""
    if memory_mb is not None:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with open(orders, "rb") as incoming:
        while line := incoming.readline():
            i = int(line)
            # CLOCK_MONOTONIC is the machine's, the same in the parent: it times the job from
            # when it really started, however late the parent reads this.
            t0 = time.monotonic()
            _write_all(reports, (json.dumps({"start": i, "at": t0}) + "\n").encode())
            res = _safe(jobs[i])
            end = time.monotonic()
            msg = {"done": i, "result": res.to_json(), "seconds": end - t0, "at": end}
            _write_all(reports, (json.dumps(msg) + "\n").encode())


def _timeout_text(timeout: float) -> str:
    return f"timed out after {timeout:g} s"


#: Jobs handed to a worker ahead of the one it runs: it goes on to the next without waiting
#: for the parent to be scheduled (on a crowded machine that wait is many milliseconds a job).
AHEAD = 3


@record
class _Lane:
    """One forked worker: the pipe we hand it job indexes on, the one it reports on."""

    pid: int
    reports: int
    orders: int
    queue: deque[int] = field(default_factory=deque)  # handed over, not done; [0] runs first
    started: float = 0.0  # when queue[0] started (or was due to)
    buffer: bytes = b""


def run_isolated(
    jobs: Sequence[Job], timeout: float, *, memory_mb: int | None = None, workers: int = 1
) -> list[tuple[CheckResult, float]]:
    """Run ``jobs`` in up to ``workers`` forked workers at once, each job under ``timeout`` s.

    Each worker takes the next job as soon as it finishes one, so the cores stay busy whatever
    the jobs cost.  Returns one ``(result, seconds)`` per job, in the order of ``jobs`` (which
    worker ran a job, and when, changes nothing in its result).  Falls back to
    :func:`run_inline` where ``os.fork`` does not exist.
    """
    if not hasattr(os, "fork"):  # pragma: no cover - not Linux/macOS
        return run_inline(jobs, timeout)
    results: dict[int, tuple[CheckResult, float]] = {}
    todo = deque(range(len(jobs)))
    lanes: list[_Lane] = []
    try:
        while todo or lanes:
            fresh: list[_Lane] = []
            # Never more workers than jobs: an idle one would hold no deadline to wait on.
            while len(lanes) < min(max(1, workers), len(lanes) + len(todo) - len(fresh)):
                lane = _fork_lane(jobs, memory_mb, lanes)
                lanes.append(lane)
                fresh.append(lane)
                lane.started = time.monotonic()
            for _ in range(AHEAD):  # dealt round the new workers, so short lists are shared
                for lane in fresh:
                    _top_up(lane, todo, len(lane.queue) + 1)
            _step(lanes, todo, timeout, results)
    finally:
        for lane in lanes:
            _retire(lane)
    return [results[i] for i in range(len(jobs))]


def _fork_lane(jobs: Sequence[Job], memory_mb: int | None, others: Sequence[_Lane]) -> _Lane:
    reports_r, reports_w = os.pipe()
    orders_r, orders_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            os.close(reports_r)
            os.close(orders_w)
            # The other workers' pipes must not stay open here: a worker learns it is done
            # when its orders pipe closes, and we learn it died when its reports pipe does.
            for other in others:
                for fd in (other.reports, other.orders):
                    with contextlib.suppress(OSError):
                        os.close(fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            # What the parent built (the whole course's model) is never garbage here: keep the
            # collector off it, or each full collection walks it all and writes to every page
            # (slower jobs, and copy-on-write copies of the parent's memory).
            gc.freeze()
            _child(orders_r, reports_w, jobs, memory_mb)
        finally:
            os._exit(0)
    os.close(reports_w)
    os.close(orders_r)
    return _Lane(pid, reports_r, orders_w)


def _top_up(lane: _Lane, todo: deque[int], depth: int = AHEAD) -> None:
    """Hand the worker jobs until it holds ``depth`` of them (fewer when the list runs out).

    Near the end of the list a worker holds one job at a time, so that none is left waiting
    behind a slow job while another worker has nothing to do.
    """
    if len(todo) < 4 * AHEAD:
        depth = 1
    while todo and len(lane.queue) < depth:
        index = todo.popleft()
        lane.queue.append(index)
        # A worker that has just died cannot take it: its reports pipe says so, and the job
        # goes back to the list (or, had it started, is recorded as crashed).
        with contextlib.suppress(OSError):
            _write_all(lane.orders, f"{index}\n".encode())


def _retire(lane: _Lane) -> int | None:
    """Close the worker's pipes, then end it (an idle one exits on its own) and reap it."""
    for fd in (lane.orders, lane.reports):
        with contextlib.suppress(OSError):
            os.close(fd)
    return _reap(lane.pid)


def _step(
    lanes: list[_Lane],
    todo: deque[int],
    timeout: float,
    results: dict[int, tuple[CheckResult, float]],
) -> None:
    """Wait for the next report or deadline; settle every worker that finished, died or overran."""
    wait = min(lane.started for lane in lanes) + timeout - time.monotonic()
    ready: list[int] = []
    if wait > 0:
        ready, _, _ = select.select([lane.reports for lane in lanes], [], [], wait)
    for lane in list(lanes):
        if lane.reports in ready and not _read_reports(lane, todo, results):
            lanes.remove(lane)
            status = _retire(lane)
            if lane.queue:  # it died with a job in hand (or due): never a pass
                elapsed = time.monotonic() - lane.started
                results[lane.queue.popleft()] = (CheckResult("crashed", _death(status)), elapsed)
            todo.extendleft(reversed(lane.queue))  # not started: run by another worker
        elif lane.queue and time.monotonic() >= lane.started + timeout:
            lanes.remove(lane)
            with contextlib.suppress(ProcessLookupError):
                os.kill(lane.pid, signal.SIGKILL)
            _retire(lane)
            results[lane.queue.popleft()] = (
                CheckResult("timeout", _timeout_text(timeout)),
                timeout,
            )
            todo.extendleft(reversed(lane.queue))


def _read_reports(
    lane: _Lane, todo: deque[int], results: dict[int, tuple[CheckResult, float]]
) -> bool:
    """Take in what the worker wrote; False when it has gone (exited or died) or is done."""
    chunk = os.read(lane.reports, 65536)
    if not chunk:
        return False
    lane.buffer += chunk
    while b"\n" in lane.buffer:
        line, lane.buffer = lane.buffer.split(b"\n", 1)
        msg = json.loads(line)
        if "start" in msg:
            lane.started = float(msg["at"])
            continue
        r = msg["result"]
        results[lane.queue.popleft()] = (
            CheckResult(r["status"], r["message"], r["offset"], r["field"], r["value"]),
            msg["seconds"],
        )
        # The next job starts now, whether or not its start has reached us yet.
        lane.started = float(msg["at"])
        _top_up(lane, todo)
        if not lane.queue:
            return False  # nothing left for it: retired as idle
    return True


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
