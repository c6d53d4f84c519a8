"""One fork server process and its framed pipe, as the parent sees it.

A server (``_server.py``) is a separate ``python -I`` process with a scrubbed environment that
imported numpy once; it runs one job at a time in a freshly forked, confined worker. The parent
only ever reads JSON frames from it (and ``.npy`` arrays inside them, without pickle): a reply
becomes an `Outcome` here (`outcome_from_reply`). The pool of servers is ``runner.py``'s.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
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
        # Once removed it stays removed: a spare that outlives its server for a moment builds
        # its root inside a tmpfs of its own (`_sandbox.enter_namespaces`), never in here.
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
