"""The parent side: a pool of pre-warmed fork servers, jobs fanned out across them.

Each server (``_server.py``) is a separate ``python -I`` process with a scrubbed environment that
imported numpy once; it runs one job at a time in a freshly forked, confined worker. The parent
only ever reads JSON frames from it (and ``.npy`` arrays inside them, without pickle).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from coursekit.exec.display import printable
from coursekit.exec.types import Job, Limits, Outcome, Status
from coursekit.exec.wire import WireError, decode

SERVER_SCRIPT = Path(__file__).with_name("_server.py")
#: Passed through when set: some machines need them for OpenBLAS to compute right.
PASS_THROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: Numeric libraries pinned to one thread: problems run in parallel across cores instead.
ONE_THREAD = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
SANDBOX_MODES = ("auto", "namespace", "setuid", "basic")
#: ``auto``: a cgroup per job where one can be made, else ``single-process``.
BUDGETS = ("auto", "single-process")
HELLO_TIMEOUT_S = 60.0
#: How long past a job's wall limit the parent waits for the server before giving up on it.
GRACE_S = 10.0
MAX_FRAME = 1 << 30

Progress = Callable[[int, int, Outcome], None]


class RunnerError(RuntimeError):
    """A fork server could not be started."""


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The scrubbed environment servers (and so programs) run with."""
    source = os.environ if environ is None else environ
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/nonexistent",
    }
    env.update({name: "1" for name in ONE_THREAD})
    env.update({name: source[name] for name in PASS_THROUGH if name in source})
    return env


class _Server:
    """One fork server process and its framed pipe."""

    def __init__(self, python: str, sandbox: str, budget: str = "auto") -> None:
        # The server makes each job's folder in here; whatever a killed server leaves behind,
        # `_remove_workdirs` takes away. Others may traverse it (a sandboxed uid must reach its
        # own folder) but not list it.
        self.workdirs = tempfile.mkdtemp(prefix="coursekit-exec-")
        os.chmod(self.workdirs, 0o711)
        self.proc = subprocess.Popen(
            [
                python,
                "-I",
                str(SERVER_SCRIPT),
                *("--sandbox", sandbox, "--budget", budget, "--workdirs", self.workdirs),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if os.environ.get("COURSEKIT_EXEC_DEBUG") else subprocess.DEVNULL,
            env=child_environment(),
            cwd="/",
            close_fds=True,
            start_new_session=True,  # a terminal's Ctrl-C reaches us, not the servers
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buffer = bytearray()
        self.hello: dict[str, Any] | None = None
        self._next_id = 0

    def wait_hello(self) -> dict[str, Any]:
        hello = self._read(time.monotonic() + HELLO_TIMEOUT_S)
        if not isinstance(hello, dict) or "hello" not in hello:
            self.kill()
            raise RunnerError(
                f"the fork server did not start ({sys.executable} -I {SERVER_SCRIPT}); "
                "set COURSEKIT_EXEC_DEBUG=1 to see its stderr"
            )
        self.hello = hello
        return hello

    def execute(self, job: Job, limits: Limits) -> dict[str, Any] | None:
        """The server's reply, or None if it died or stopped answering (then it is killed)."""
        self._next_id += 1
        frame = {
            "id": self._next_id,
            "source": job.source,
            "filename": job.filename,
            "limits": limits.as_dict(),
        }
        body = json.dumps(frame).encode()
        try:
            os.write(self._in, struct.pack(">I", len(body)))
            view = memoryview(body)
            while view:
                view = view[os.write(self._in, view) :]
        except OSError:
            self.kill()
            return None
        reply = self._read(time.monotonic() + limits.wall_s + GRACE_S)
        if not isinstance(reply, dict) or reply.get("id") != self._next_id:
            self.kill()
            return None
        return reply

    def _read(self, deadline: float) -> Any:
        need: int | None = None
        while True:
            if need is None and len(self._buffer) >= 4:
                (need,) = struct.unpack(">I", self._buffer[:4])
                if need > MAX_FRAME:
                    return None
            if need is not None and len(self._buffer) >= 4 + need:
                body = bytes(self._buffer[4 : 4 + need])
                del self._buffer[: 4 + need]
                try:
                    return json.loads(body)
                except ValueError:
                    return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._out], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._close_pipes()
        self._remove_workdirs()

    def close(self) -> None:
        if self.proc.poll() is None:
            self._close_pipes()  # EOF on stdin: the server finishes its job and exits
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_pipes()
        self._remove_workdirs()

    def _remove_workdirs(self) -> None:
        shutil.rmtree(self.workdirs, ignore_errors=True)

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def outcome_from_reply(key: str, reply: Mapping[str, Any] | None) -> Outcome:
    if reply is None:
        return Outcome(
            key, Status.CRASHED, message="the runner stopped answering; it was restarted"
        )
    try:
        status = Status(str(reply.get("status")))
    except ValueError:
        return Outcome(key, Status.CRASHED, message=f"the runner sent a bad status: {reply!r:.200}")
    value: Any = None
    message = printable(str(reply.get("message", "")))
    if status is Status.OK:
        try:
            value = decode(reply.get("value"))
        except WireError as exc:
            status, message = Status.CRASHED, f"the result could not be read: {exc}"
    tb = printable(str(reply.get("traceback", "")))
    if tb:
        message = f"{message}\n{tb.rstrip()}"
    return Outcome(
        key=key,
        status=status,
        value=value,
        message=message,
        traceback=tb,
        stdout=printable(str(reply.get("stdout", ""))),
        stderr_tail=printable(str(reply.get("stderr_tail", ""))),
        duration=float(reply.get("duration", 0.0)),
        sandbox=str(reply.get("sandbox", "")),
        extra={k: reply[k] for k in ("stdout_bytes", "stderr_bytes", "budget") if k in reply},
    )


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
