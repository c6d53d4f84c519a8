"""The fork server of ``coursekit.exec``: started as ``python -I _server.py [--sandbox MODE]``.

It is a standalone script (standard library and numpy only; it never imports coursekit): it
imports numpy once, then serves jobs read from its stdin and answers on its stdout, one at a
time. For each job it forks a worker (``_worker.py``) that confines itself (``_sandbox.py``),
runs the program and writes the value ``solve()`` returned, as data, to a result pipe. The
server enforces the wall clock, the job's CPU and the output cap, kills whatever the job left
behind, and answers with one frame (``_frames.py``).

Sandbox modes, strongest first (``auto`` picks the strongest that works; see ``_sandbox.py``):
``namespace`` (root: new pid, mount, network, IPC and UTS namespaces, a read-only root holding
only the interpreter's files, a fresh uid), ``setuid`` (root without namespaces: the fresh uid
only) and ``basic`` (not root: rlimits, its own session and a fresh working directory).

Budgets (``_cgroup.py``): where a cgroup per job can be made (root), the job's memory,
processes and CPU are counted together; elsewhere the job may not create processes, so the
per-process limits are the job's.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same modules, under the names the type checker knows them by
    from coursekit.exec import _cgroup, _frames, _sandbox, _spare, _verdict
else:
    # The helpers live beside this script; they are taken from here and the folder is then
    # dropped from sys.path again, so that a program's imports never look into it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _cgroup
    import _frames
    import _sandbox
    import _spare
    import _verdict

    del sys.path[0]

import numpy as np
import numpy.fft
import numpy.linalg
import numpy.polynomial
import numpy.random

PROTOCOL = 2
READ_CHUNK = 65536
STDERR_TAIL = 4096
#: How often the server samples the job's cgroup CPU time while it runs.
CPU_POLL_S = 0.05
PR_SET_CHILD_SUBREAPER = 36


class ParentGone(Exception):
    """The parent closed our stdin (or wrote while a job ran): it is gone."""


# ---------------------------------------------------------------- process bookkeeping


class Capture:
    """Bytes read from one pipe: the head up to a cap, a tail, and the total seen."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = b""
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail = (self.tail + chunk)[-STDERR_TAIL:]

    def frame_size(self) -> int | None:
        if len(self.head) < 4:
            return None
        return int(struct.unpack(">I", self.head[:4])[0])


def serve_job(job: dict[str, Any], spare: _spare.Spare, watch: int | None = None) -> dict[str, Any]:
    """Hand ``job`` to the waiting worker and watch it; the reply frame.

    ``watch`` is the parent's pipe: anything readable on it during a job means it is gone.
    """
    limits = job["limits"]
    output_cap = int(limits["output_kb"]) << 10
    result_cap = int(limits["result_kb"]) << 10
    wall = float(limits["wall_s"])
    cpu_limit = float(limits["cpu_s"])
    if spare.cgroup is not None:
        try:
            spare.cgroup.limit(int(limits["memory_mb"]) << 20, int(limits["processes"]))
        except OSError as exc:  # e.g. a limit below what the waiting worker already uses
            spare.kill()
            return {
                "status": "crashed",
                "message": f"the runner could not set the job's cgroup limits: {exc}",
                "sandbox": spare.mode,
            }
    start = time.perf_counter()
    deadline = start + wall
    spare.hold_namespaces()
    # Processes only where the job's cgroup counts them; else none, and rlimits are the job's.
    job = {**job, "processes": int(limits["processes"]) if spare.cgroup is not None else 1}
    with contextlib.suppress(OSError):  # if the worker died setting up, its result pipe says why
        _frames.write_frame(spare.job_w, job)
    os.close(spare.job_w)
    spare.job_w = -1
    out = Capture(output_cap)
    err = Capture(output_cap)
    res = Capture(result_cap + 8)
    open_fds = {spare.out: out, spare.err: err, spare.res: res}
    verdict: dict[str, Any] | None = None
    wait_status: int | None = None
    cpu_used = 0.0
    watched = [spare.pidfd] + ([watch] if watch is not None else [])
    tick = CPU_POLL_S if spare.cgroup is not None else wall
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            verdict = {
                "status": "timeout",
                "message": f"wall-clock limit exceeded: still running after {wall:g} s",
            }
            break
        ready, _, _ = select.select([*open_fds, *watched], [], [], min(remaining, tick))
        if watch is not None and watch in ready:
            spare.kill()
            raise ParentGone
        for fd in ready:
            if fd in open_fds:
                read_into(fd, open_fds)
        verdict = _over_a_limit(
            spare, cpu_limit, out.total + err.total, output_cap, res, result_cap
        )
        if verdict is not None:
            break
        # A result counts only once the worker has ended: keep watching until it does.
        if spare.pidfd in ready:
            wait_status, cpu_used = spare.wait()
            break
    duration = time.perf_counter() - start
    spare.kill()
    # What the program wrote before it ended is in the pipes; take it (bounded in time).
    _drain(open_fds, 0.2 if wait_status is not None else 0.0)
    if verdict is None:
        verdict = _verdict.judge(wait_status, bytes(res.head), limits, cpu_used)
        verdict = within_budget(verdict, spare, limits)
    verdict["duration"] = duration
    verdict["stdout"] = out.head.decode("utf-8", "replace")
    verdict["stdout_bytes"] = out.total
    verdict["stderr_tail"] = err.tail.decode("utf-8", "replace")
    verdict["stderr_bytes"] = err.total
    verdict["sandbox"] = spare.mode
    verdict["budget"] = spare.cgroup.kind if spare.cgroup is not None else "single-process"
    return verdict


def _over_a_limit(
    spare: _spare.Spare,
    cpu_limit: float,
    written: int,
    output_cap: int,
    res: Capture,
    result_cap: int,
) -> dict[str, Any] | None:
    """The verdict that stops a running job (CPU, output, result size), or None to go on."""
    job_cpu = spare.cgroup.job_cpu() if spare.cgroup is not None else None
    if job_cpu is not None and job_cpu > cpu_limit:
        return _verdict.cpu_exceeded(cpu_limit)
    if written > output_cap:
        return {
            "status": "output",
            "message": (
                f"output limit exceeded: more than {output_cap >> 10} KiB written to "
                "stdout/stderr; the program was stopped and the rest discarded"
            ),
        }
    size = res.frame_size()
    if size is not None and size > result_cap:
        return {
            "status": "output",
            "message": f"the returned value is larger than {result_cap >> 10} KiB",
        }
    return None


def _drain(open_fds: dict[int, Capture], seconds: float) -> None:
    """Read what is left in the pipes for at most `seconds` (0: only what is there now)."""
    drain_until = time.perf_counter() + seconds
    while open_fds:
        ready, _, _ = select.select(
            list(open_fds), [], [], max(0.0, drain_until - time.perf_counter())
        )
        if not ready:
            break
        for fd in ready:
            read_into(fd, open_fds)


def within_budget(
    verdict: dict[str, Any], spare: _spare.Spare, limits: dict[str, Any]
) -> dict[str, Any]:
    """What the job's cgroup saw overrides what the worker said: it counts every process."""
    if spare.cgroup is None:
        return verdict
    if spare.cgroup.oom_kills():
        return {
            "status": "memory",
            "message": (
                f"memory limit exceeded: the job (the program and every process it started) "
                f"needed more than {int(limits['memory_mb'])} MiB"
            ),
        }
    job_cpu = spare.cgroup.job_cpu()
    if job_cpu is not None and job_cpu > float(limits["cpu_s"]) and verdict["status"] != "timeout":
        return _verdict.cpu_exceeded(float(limits["cpu_s"]))
    return verdict


def read_into(fd: int, open_fds: dict[int, Capture]) -> None:
    if fd not in open_fds:
        return
    chunk = os.read(fd, READ_CHUNK)
    if chunk:
        open_fds[fd].add(chunk)
    else:
        del open_fds[fd]


PROBE_LIMITS = {
    "wall_s": 5,
    "cpu_s": 5,
    "memory_mb": 4096,
    "output_kb": 64,
    "result_kb": 64,
    "processes": 8,
    "file_mb": 1,
    "disk_mb": 1,
    "open_files": 64,
}


def probe(mode: str) -> str:
    """The strongest sandbox mode that works here (``auto``), or the one asked for."""
    if mode != "auto":
        return mode
    if os.geteuid() != 0:
        return "basic"
    for candidate in ("namespace", "setuid"):
        job = {
            "source": "def solve():\n    return 1\n",
            "filename": "probe.py",
            "limits": PROBE_LIMITS,
        }
        spare: _spare.Spare | None = None
        try:
            spare = _spare.Spare(candidate, SETTING)
            ok = serve_job(job, spare).get("status") == "ok"
        except (OSError, _sandbox.SandboxError):
            ok = False
        finally:
            if spare is not None:
                spare.discard(set())
        if ok:
            return candidate
    return "basic"


SETTING = _spare.Setting(workdirs="")


def main(argv: list[str]) -> int:
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    mode = options.get("--sandbox", "auto")
    SETTING.workdirs = options.get("--workdirs") or tempfile.mkdtemp(prefix="coursekit-exec-")
    SETTING.base = tempfile.mkdtemp(prefix="root-", dir=SETTING.workdirs)
    SETTING.roots = _sandbox.readable_roots()
    try:
        return serve(mode, options.get("--budget", "auto"))
    finally:
        shutil.rmtree(SETTING.workdirs, ignore_errors=True)
        if SETTING.layout is not None:
            SETTING.layout.sweep()


def serve(mode: str, budget: str) -> int:
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _sandbox._libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    SETTING.layout = _cgroup.detect() if budget == "auto" else None
    if SETTING.layout is not None:
        SETTING.layout.sweep()
    gc.collect()
    gc.freeze()
    mode = probe(mode)
    _frames.write_frame(
        proto_out,
        {
            "hello": PROTOCOL,
            "sandbox": mode,
            "budget": SETTING.layout.kind if SETTING.layout is not None else "single-process",
            "python": sys.version,
            "numpy": np.__version__,
            "pid": os.getpid(),
        },
    )
    spares = [_spare.Spare(mode, SETTING)]
    try:
        while True:
            job = _frames.read_frame(proto_in)
            if not isinstance(job, dict):
                return 0
            spare = spares.pop(0)
            try:
                reply = serve_job(job, spare, watch=proto_in)
            except ParentGone:
                spares.append(spare)
                return 0
            except Exception as exc:  # a bug here must not take the whole run down
                reply = {"status": "crashed", "message": f"the runner failed: {exc!r}"}
            reply["id"] = job.get("id")
            try:
                _frames.write_frame(proto_out, reply)
            except OSError:  # the parent is gone
                spares.append(spare)
                return 0
            # While this job is cleaned up, the next spare gets ready.
            spares.append(_spare.Spare(mode, SETTING))
            spare.discard({waiting.pid for waiting in spares})
    finally:
        for spare in spares:
            spare.discard(set())


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every job and spare is ended and the folders are gone (`main`'s finally): the parent
    # waits for this exit, and the interpreter's teardown of numpy would only lengthen it.
    sys.stderr.flush()
    os._exit(code)
