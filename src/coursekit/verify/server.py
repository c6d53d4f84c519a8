"""sympy in a process of its own, so that neither it nor its workers carry the loaded course.

A worker forked from the process that loaded the course starts as large as the course (the
pages are shared, but each one counts in the worker's resident set), and the parent grows by
sympy itself (~45 MB) to fork it: at 1,000 chapters a one-claim edit peaked at ~315 MB where the
same run without sympy peaks at ~280 MB. So `check` verifies through a `SympyServer`: on the
first request it starts a fresh interpreter (`python -c`, the same interpreter and import
path), which imports sympy, verifies what it is sent with `verify_documents` and forks its own
workers from itself. A run that verifies nothing starts nothing and pays nothing. Specs go to
it pickled (both ends are this program) and verdicts come back as their JSON, over two pipes.

When the server cannot answer (it did not start, died, broke a pipe, raised, or overran every
job's limit), `verify` returns None and the caller verifies in-process as before: a lost server
costs time, never a verdict, and never hangs the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Sequence

from coursekit.verify.spec import MathsSpec, Verdict

_LENGTH = struct.Struct(">Q")
#: Beyond every job's own limit, what a request may take before the parent gives up on the
#: server: forking workers, importing sympy, a crowded machine.
SLACK_SECONDS = 60.0


class SympyServer:
    """The parent's end of the verification server: started by the first `verify`, ended by
    `close` (or the `with` block)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self._requests = -1
        self._replies = -1
        self._failed = False  # a server that failed once is not asked (nor started) again
        self._asked = False  # whether a request went to the server (it may have forked workers)
        self._ahead: bool | None = None  # see `ahead`
        self.answered = 0  # requests the server answered (the rest were verified in-process)

    def start(self) -> None:
        """Start the server now, ahead of the first request: its interpreter imports sympy
        while this process goes on (the load calls this when it meets new claims), unless
        `ahead` settled it already."""
        if self._ahead is None:
            self._started()

    def ahead(self, start: bool) -> None:
        """What a look at the edit settled before the load (`check`, coursekit.frontmatter):
        start now, or not before the first request, whatever the load then meets."""
        self._ahead = start
        if start:
            self._started()

    def _started(self) -> bool:
        if self.process is not None:
            return True
        if self._failed:
            return False
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        # The same interpreter and import path as this process (an editable install, a
        # source checkout on PYTHONPATH), nothing of its stdio. `-P`: `python -c` would put the
        # working directory first on the path, and a course repository holding `sympy.py`
        # would then run its own code here.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        with contextlib.suppress(OSError, ValueError):  # no interpreter to start: below
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-c", _SERVE, str(requests_r), str(replies_w)],
                pass_fds=(requests_r, replies_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        os.close(requests_r)  # the server's ends: it holds its own copies, if it started
        os.close(replies_w)
        if self.process is None:
            os.close(requests_w)
            os.close(replies_r)
            self._failed = True
            return False
        self._requests, self._replies = requests_w, replies_r
        os.set_blocking(requests_w, False)  # sent against a deadline (_send)
        return True

    @property
    def failed(self) -> bool:
        """Whether the server failed once (it is then neither asked nor started again)."""
        return self._failed

    @property
    def pid(self) -> int:
        """The server's process id (0 when none runs)."""
        return self.process.pid if self.process is not None else 0

    def verify(
        self,
        specs: Sequence[MathsSpec],
        timeout: float,
        *,
        memory_mb: int | None = None,
        workers: int = 1,
    ) -> list[list[Verdict]] | None:
        """`verify_documents(specs, ...)` as the server computes it, or None when it cannot."""
        if not self._started():
            return None
        # Pickled, not the specs' JSON: the server must verify exactly the specs this process
        # would have, not what a JSON round trip keeps of them (it once lost `solutions: []`).
        # Both ends are this program; the verdicts return as JSON.
        request = pickle.dumps((list(specs), timeout, memory_mb, workers))
        self._asked = True
        # However the server fares, `check` must end: past what every job's own limit allows,
        # the parent gives up on it and verifies in-process, where the limits are its own.
        jobs = sum(len(spec.claims) + len(spec.equations) for spec in specs)
        deadline = time.monotonic() + timeout * (jobs + 1) + SLACK_SECONDS
        try:
            sent = _send(self._requests, request, deadline)
            reply = _receive(self._replies, deadline) if sent else None
        except OSError:
            reply = None
        verdicts = _decoded(reply, len(specs))
        if verdicts is None:
            self._failed = True  # not asked, nor started, again
            self.close()
            return None
        self.answered += 1
        return verdicts

    def close(self) -> None:
        """End the server (and any worker of its) and reap it; nothing when none started."""
        process, self.process = self.process, None
        if process is None:
            return
        for fd in (self._requests, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        # SIGTERM first: the server unwinds, ending the workers it forked (a worker whose server
        # is gone has nobody left to end it when it overruns). SIGKILL if it does not go (it
        # was stopped, say). A server never asked forked nothing: it is killed outright, not
        # left to finish importing sympy (started early for maths the kept results answered).
        with contextlib.suppress(ProcessLookupError):
            if self._asked:
                process.terminate()
                os.kill(process.pid, signal.SIGCONT)
            else:
                process.kill()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> SympyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _decoded(reply: bytes | None, count: int) -> list[list[Verdict]] | None:
    """The verdicts a reply holds, or None for anything but a whole, well-formed answer."""
    if reply is None:
        return None
    try:
        data = json.loads(reply)
        documents = data["verdicts"]
        if not isinstance(documents, list) or len(documents) != count:
            return None
        return [[Verdict.from_json(v) for v in verdicts] for verdicts in documents]
    except (ValueError, TypeError, KeyError):
        return None


def _stop(signum: int, frame: object) -> None:  # pragma: no cover - runs in the server
    raise SystemExit(0)


# What the server's interpreter runs (`python -c`): the pipes' descriptors are its arguments.
_SERVE = "import sys; from coursekit.verify.server import serve; serve(*map(int, sys.argv[1:3]))"


def serve(requests: int, replies: int) -> None:  # pragma: no cover - runs in the server
    """Answer each request until the parent closes its end (or ends the server)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, _stop)
    # Started to be asked: sympy is imported now, while the parent is still loading the
    # course, not when the first request arrives.
    from coursekit.verify.symbolic import sympy_module

    sympy_module()
    # The verifier too, before the first request. Not at the top of this module: the parent
    # imports it to start the server as soon as it knows an edit brought new maths.
    import coursekit.verify.runner  # noqa: F401

    try:
        while (message := _receive(requests)) is not None:
            _send(replies, _answer(message))
    except SystemExit:  # SIGTERM (`close`): the unwinding has ended any workers
        pass
    # The parent waits for this process to end (`close` reaps it): the interpreter's own
    # teardown of sympy's objects was most of that wait (~0.1-0.2 s), and nothing needs it.
    os._exit(0)


def _answer(message: bytes) -> bytes:  # pragma: no cover - runs in the server
    try:
        from coursekit.verify.runner import verify_documents

        specs, timeout, memory_mb, workers = pickle.loads(message)
        checked = verify_documents(specs, timeout, memory_mb=memory_mb, workers=workers)
    except Exception as exc:  # the parent verifies in-process, and reports what that raises
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()
    return json.dumps({"verdicts": [[v.to_json() for v in doc] for doc in checked]}).encode()


def _send(fd: int, payload: bytes, deadline: float | None = None) -> bool:
    """Write one message; False when the deadline (time.monotonic) passes first (a request
    larger than the pipe's buffer waits for the server to read it). With a deadline `fd` must
    be non-blocking: a blocking write of more than the pipe holds would wait past it."""
    view = memoryview(_LENGTH.pack(len(payload)) + payload)
    while view:
        if not _ready(fd, deadline, writing=True):
            return False
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            continue  # the pipe filled up again: wait for room
    return True


def _receive(fd: int, deadline: float | None = None) -> bytes | None:
    """One message, or None at the end of the stream, for a message cut short, or when the
    deadline (time.monotonic) passes first."""
    head = _read_exactly(fd, _LENGTH.size, deadline)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    return _read_exactly(fd, length, deadline)


def _read_exactly(fd: int, count: int, deadline: float | None) -> bytes | None:
    chunks: list[bytes] = []
    while count > 0:
        if not _ready(fd, deadline):
            return None
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _ready(fd: int, deadline: float | None, writing: bool = False) -> bool:
    """Whether `fd` can be read (or written) before the deadline (time.monotonic; None: no
    deadline, and a blocking call waits)."""
    if deadline is None:
        return True
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    readable, writable, _ = select.select(
        [] if writing else [fd], [fd] if writing else [], [], left
    )
    return bool(writable if writing else readable)


__all__ = ["SympyServer", "serve"]
