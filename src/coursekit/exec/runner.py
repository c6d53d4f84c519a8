"""The parent side: a pool of pre-warmed fork servers, jobs fanned out across them.

Each server is one process and its pipe (``connection.py``); the pool starts them on first use,
hands each the next job not begun, and returns the outcomes in the jobs' order.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
from collections.abc import Iterable, Sequence

from coursekit.exec.connection import (
    Progress,
    RunnerError,
    _Server,
    child_environment,
    outcome_from_reply,
)
from coursekit.exec.types import Job, Limits, Outcome, Status

# re-exported: the names the package offers (coursekit.exec) and tests patch
__all__ = [
    "Progress",
    "Runner",
    "RunnerError",
    "_Server",
    "child_environment",
    "outcome_from_reply",
    "run_programs",
]

SANDBOX_MODES = ("auto", "namespace", "setuid", "basic")
#: ``auto``: a cgroup per job where one can be made, else ``single-process``.
BUDGETS = ("auto", "single-process")


class Runner:
    """A pool of ``parallel`` fork servers, started on first use and kept until ``close()``.

    ``narrow``: run on one server until ``widen()`` is called (a run in the background, beside
    other work that keeps the cores busy), then on all of them.

    >>> with Runner(parallel=2) as runner:            # doctest: +SKIP
    ...     outcomes = runner.run([Job("a", "def solve():\\n    return 1\\n")])
    """

    def __init__(
        self,
        parallel: int | None = None,
        *,
        python: str | None = None,
        sandbox: str = "auto",
        budget: str = "auto",
        narrow: bool = False,
    ) -> None:
        if sandbox not in SANDBOX_MODES:
            raise ValueError(f"sandbox must be one of {SANDBOX_MODES}, not {sandbox!r}")
        if budget not in BUDGETS:
            raise ValueError(f"budget must be one of {BUDGETS}, not {budget!r}")
        self.budget_request = budget
        self.parallel = max(1, parallel or os.cpu_count() or 1)
        self.python = python or sys.executable
        self.sandbox_request = sandbox
        self._servers: list[_Server] = []
        self._lock = threading.Lock()
        # How many servers `run` uses: one while `narrow` (the run shares the machine with
        # other work), every one of `parallel` once `widen()` was called.
        self._width = 1 if narrow else self.parallel
        self._running: queue.SimpleQueue[tuple[int, Outcome] | None] | None = None

    # -- lifecycle

    def start(self, count: int | None = None) -> None:
        """Start (and wait for) the servers now rather than on first use."""
        want = min(self.parallel, count if count is not None else self.parallel)
        with self._lock:
            fresh = [
                _Server(self.python, self.sandbox_request, self.budget_request)
                for _ in range(want - len(self._servers))
            ]
            try:
                for server in fresh:
                    server.wait_hello()
            except RunnerError:
                for server in fresh:
                    server.kill()
                raise
            self._servers.extend(fresh)

    @property
    def sandbox(self) -> str:
        """The sandbox mode the servers run (``namespace``, ``setuid`` or ``basic``)."""
        self.start(1)
        hello = self._servers[0].hello or {}
        return str(hello.get("sandbox", ""))

    @property
    def budget(self) -> str:
        """How a job's budget is counted: ``cgroup2``/``cgroup1`` (the whole job), or
        ``single-process`` (no cgroup: the job may not create processes)."""
        self.start(1)
        hello = self._servers[0].hello or {}
        return str(hello.get("budget", ""))

    def close(self) -> None:
        with self._lock:
            for server in self._servers:
                server.close()
            self._servers.clear()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running

    def widen(self) -> None:
        """Use all `parallel` servers from now on, in a `run` going on too (it starts the rest
        and hands them the jobs not begun yet)."""
        with self._lock:
            self._width = self.parallel
            if self._running is not None:
                self._running.put(None)

    def run(
        self,
        jobs: Sequence[Job],
        limits: Limits | None = None,
        progress: Progress | None = None,
    ) -> list[Outcome]:
        """Run every job; outcomes in the order of ``jobs``. Never raises for a program's sake.

        ``progress(done, total, outcome)`` is called in the calling thread as each job ends.
        """
        limits = limits or Limits()
        if not jobs:
            return []
        self.start(min(len(jobs), self._width))
        pending: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(jobs)):
            pending.put(index)
        # what each job came to, and None when widen() asks for more servers
        finished: queue.SimpleQueue[tuple[int, Outcome] | None] = queue.SimpleQueue()
        threads: list[threading.Thread] = []

        def drive(count: int) -> None:
            for slot in range(len(threads), min(count, len(jobs))):
                thread = threading.Thread(
                    target=self._drive, args=(slot, jobs, limits, pending, finished), daemon=True
                )
                threads.append(thread)
                thread.start()

        with self._lock:
            self._running = finished
            if self._width > len(self._servers):  # widened while those servers started
                finished.put(None)
        try:
            drive(len(self._servers))
            results: list[Outcome | None] = [None] * len(jobs)
            done = 0
            while done < len(jobs):
                item = finished.get()
                if item is None:
                    if not pending.empty():  # servers started now would still have work
                        with contextlib.suppress(RunnerError):  # those there go on alone
                            self.start(min(len(jobs), self._width))
                        drive(len(self._servers))
                    continue
                index, outcome = item
                results[index] = outcome
                done += 1
                if progress is not None:
                    progress(done, len(jobs), outcome)
        finally:
            with self._lock:
                self._running = None
        for thread in threads:
            thread.join()
        return [outcome for outcome in results if outcome is not None]

    def _drive(
        self,
        slot: int,
        jobs: Sequence[Job],
        limits: Limits,
        pending: queue.SimpleQueue[int],
        finished: queue.SimpleQueue[tuple[int, Outcome] | None],
    ) -> None:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            finished.put((index, self._execute(slot, jobs[index], limits)))

    def _execute(self, slot: int, job: Job, limits: Limits) -> Outcome:
        try:
            reply = self._server(slot).execute(job, limits)
            return outcome_from_reply(job.key, reply)
        except Exception as exc:  # never let one job take the run down
            return Outcome(job.key, Status.CRASHED, message=f"the runner failed: {exc!r}")

    def _server(self, slot: int) -> _Server:
        server = self._servers[slot]
        if not server.alive or server.proc.stdin is None or server.proc.stdin.closed:
            server.kill()
            server = _Server(self.python, self.sandbox_request, self.budget_request)
            server.wait_hello()
            self._servers[slot] = server
        return server


def run_programs(
    jobs: Iterable[Job],
    limits: Limits | None = None,
    parallel: int | None = None,
    progress: Progress | None = None,
    *,
    sandbox: str = "auto",
    runner: Runner | None = None,
) -> list[Outcome]:
    """Run each job's ``solve()`` in its own confined process; one Outcome per job, in order.

    ``runner``: a pool started earlier (its servers may still be starting: `Runner.run` waits
    for them), used instead of a new one and closed afterwards.
    """
    job_list = list(jobs)
    if not job_list:
        if runner is not None:
            runner.close()
        return []
    if runner is None:
        runner = Runner(min(parallel or os.cpu_count() or 1, len(job_list)), sandbox=sandbox)
    with runner:
        return runner.run(job_list, limits, progress)
