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
import json
import math
import os
import secrets
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
from typing import Any

# The helpers live beside this script; they are taken from here and the folder is then dropped
# from sys.path again, so that a program's imports never look into it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _cgroup  # type: ignore[import-not-found]
import _frames  # type: ignore[import-not-found]
import _sandbox  # type: ignore[import-not-found]
import _worker  # type: ignore[import-not-found]

del sys.path[0]

import numpy as np  # noqa: E402
import numpy.fft  # noqa: E402
import numpy.linalg  # noqa: E402
import numpy.polynomial  # noqa: E402
import numpy.random  # noqa: E402

PROTOCOL = 2
READ_CHUNK = 65536
STDERR_TAIL = 4096
#: How often the server samples the job's cgroup CPU time while it runs.
CPU_POLL_S = 0.05
PR_SET_CHILD_SUBREAPER = 36

UID_LOW = 0x2000_0000
UID_SPAN = 0x4000_0000

#: What a worker may put in its frame; anything else did not come from the worker.
FRAME_STATUSES = ("ok", "error", "memory", "exited", "no-result", "sandbox")


class ParentGone(Exception):
    """The parent closed our stdin (or wrote while a job ran): it is gone."""


# ---------------------------------------------------------------- process bookkeeping


def kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` (a fork bomb included) from a short-lived helper."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            _worker.kill_all_as_self()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


_own_pid_ns: list[int] = []


def own_pid_namespace() -> int:
    """An fd on the server's own pid namespace (to undo ``unshare(CLONE_NEWPID)``)."""
    if not _own_pid_ns:
        _own_pid_ns.append(os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC))
    return _own_pid_ns[0]


def reap_orphans(keep: set[int]) -> None:
    """Reap exited processes the program left behind (reparented to us, a subreaper).

    Pids in ``keep`` (our spare workers) are never reaped here: on meeting one, stop.
    """
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid in keep:
            return
        with_suppressed(os.waitpid, info.si_pid, 0)


def with_suppressed(func: Any, *args: Any) -> None:
    with contextlib.suppress(OSError):
        func(*args)


# ---------------------------------------------------------------- the server


def signal_name(sig: int) -> str:
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
    meaning = {
        "SIGSEGV": "segmentation fault",
        "SIGBUS": "bus error",
        "SIGABRT": "aborted",
        "SIGFPE": "arithmetic fault",
        "SIGILL": "illegal instruction",
        "SIGKILL": "killed",
    }.get(name)
    return f"{name} ({meaning})" if meaning else name


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


class Spare:
    """A worker forked ahead of its job, confining itself while the previous job runs."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.uid = UID_LOW + secrets.randbelow(UID_SPAN)
        # The namespace sandbox needs no folder of the host's: its root and working directory
        # are tmpfs mounts of its own, on top of the (empty) server folder.
        if mode == "namespace":
            self.workdir = ""
        else:
            # Inside the folder the parent made for this server: if the server is killed
            # before it can clean up, the parent removes the whole folder.
            self.workdir = tempfile.mkdtemp(prefix="job-", dir=WORKDIRS)
            if mode == "setuid":
                os.chown(self.workdir, self.uid, self.uid)
        self.cgroup = None
        if LAYOUT is not None:
            # Without its cgroup (the hierarchy went away?) the job may not create processes.
            with contextlib.suppress(OSError):
                self.cgroup = LAYOUT.new_job()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        job_r, self.job_w = os.pipe()
        self.out, self.err, self.res = out_r, err_r, res_r
        child_fds = [out_w, err_w, res_w, job_r]
        if mode == "namespace":
            # The worker is pid 1 of a pid namespace of its own: when it dies, the kernel kills
            # every process the program started. Our own children go back to our namespace.
            _sandbox.check(_sandbox._libc.unshare(_sandbox.CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        try:
            self.pid = os.fork()
            if self.pid == 0:
                _worker.worker(
                    mode,
                    BASE if mode == "namespace" else self.workdir,
                    self.uid,
                    child_fds,
                    ROOTS,
                )
        finally:
            if mode == "namespace":
                _sandbox.check(
                    _sandbox._libc.setns(own_pid_namespace(), _sandbox.CLONE_NEWPID),
                    "setns(own pid namespace)",
                )
        if self.cgroup is not None:
            # Before the job is handed over (it waits for the job), so all it does is counted.
            try:
                self.cgroup.add(self.pid)
            except OSError:
                self.cgroup.remove()
                self.cgroup = None
        self.pidfd = os.pidfd_open(self.pid)
        self.reaped = False
        self.held: list[int] = []
        for fd in child_fds:
            os.close(fd)

    def hold_namespaces(self) -> None:
        """Keep the worker's namespaces alive past its exit, until ``discard``.

        Tearing down a mount namespace waits for an RCU grace period (milliseconds): with a
        reference held here, the worker's exit (which the verdict waits for) does not pay it.
        """
        if self.mode != "namespace":
            return
        for kind in ("mnt", "net", "ipc", "uts"):
            with contextlib.suppress(OSError):
                self.held.append(os.open(f"/proc/{self.pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC))

    def kill(self) -> None:
        if self.pidfd >= 0 and not self.reaped:
            with_suppressed(signal.pidfd_send_signal, self.pidfd, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.pid and self.mode != "namespace":
            with_suppressed(os.killpg, self.pid, signal.SIGKILL)

    def wait(self) -> tuple[int, float]:
        """Reap the worker: its wait status and the CPU seconds it used."""
        _, status, usage = os.wait4(self.pid, 0)
        self.reaped = True
        return status, usage.ru_utime + usage.ru_stime

    def discard(self, keep: set[int]) -> None:
        """Clean up after the job (off the critical path: after the reply went out)."""
        for fd in (self.job_w, self.out, self.err, self.res):
            with_suppressed(os.close, fd)
        if not self.reaped:
            self.kill()
            with suppress_all():
                self.wait()
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.mode == "setuid":
            kill_uid(self.uid)
        elif self.mode == "basic":
            with_suppressed(os.killpg, self.pid, signal.SIGKILL)
        if self.pidfd >= 0:
            with_suppressed(os.close, self.pidfd)
        for fd in self.held:
            with_suppressed(os.close, fd)
        if self.mode != "namespace":  # there, the kernel takes the job's processes with it
            reap_orphans(keep)
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def suppress_all() -> contextlib.suppress:
    return contextlib.suppress(OSError, ChildProcessError)


def serve_job(job: dict[str, Any], spare: Spare, watch: int | None = None) -> dict[str, Any]:
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
        job_cpu = spare.cgroup.job_cpu() if spare.cgroup is not None else None
        if job_cpu is not None and job_cpu > cpu_limit:
            verdict = cpu_exceeded(cpu_limit)
            break
        if out.total + err.total > output_cap:
            verdict = {
                "status": "output",
                "message": (
                    f"output limit exceeded: more than {output_cap >> 10} KiB written to "
                    "stdout/stderr; the program was stopped and the rest discarded"
                ),
            }
            break
        size = res.frame_size()
        if size is not None and size > result_cap:
            verdict = {
                "status": "output",
                "message": f"the returned value is larger than {result_cap >> 10} KiB",
            }
            break
        # A result counts only once the worker has ended: keep watching until it does.
        if spare.pidfd in ready:
            wait_status, cpu_used = spare.wait()
            break
    duration = time.perf_counter() - start
    spare.kill()
    # What the program wrote before it ended is in the pipes; take it (bounded in time).
    drain_until = time.perf_counter() + (0.2 if wait_status is not None else 0.0)
    while open_fds:
        ready, _, _ = select.select(
            list(open_fds), [], [], max(0.0, drain_until - time.perf_counter())
        )
        if not ready:
            break
        for fd in ready:
            read_into(fd, open_fds)
    if verdict is None:
        verdict = judge(wait_status, bytes(res.head), limits, cpu_used)
        verdict = within_budget(verdict, spare, limits)
    verdict["duration"] = duration
    verdict["stdout"] = out.head.decode("utf-8", "replace")
    verdict["stdout_bytes"] = out.total
    verdict["stderr_tail"] = err.tail.decode("utf-8", "replace")
    verdict["stderr_bytes"] = err.total
    verdict["sandbox"] = spare.mode
    verdict["budget"] = spare.cgroup.kind if spare.cgroup is not None else "single-process"
    return verdict


def cpu_exceeded(cpu_limit: float) -> dict[str, Any]:
    return {"status": "timeout", "message": f"CPU time limit exceeded ({cpu_limit:g} s of CPU)"}


def within_budget(verdict: dict[str, Any], spare: Spare, limits: dict[str, Any]) -> dict[str, Any]:
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
        return cpu_exceeded(float(limits["cpu_s"]))
    return verdict


def read_into(fd: int, open_fds: dict[int, Capture]) -> None:
    if fd not in open_fds:
        return
    chunk = os.read(fd, READ_CHUNK)
    if chunk:
        open_fds[fd].add(chunk)
    else:
        del open_fds[fd]


def parse_frame(result: bytes) -> tuple[dict[str, Any] | None, str]:
    """The worker's one frame from what came down the result pipe, or why there is none."""
    if not result:
        return None, ""
    if len(result) < 4:
        return None, "a partial frame"
    (size,) = struct.unpack(">I", result[:4])
    if len(result) < 4 + size:
        return None, "a partial frame"
    if len(result) > 4 + size:
        return None, "more than one frame (the program wrote to the result channel itself)"
    try:  # the program can write to the result pipe itself: it must parse and re-encode
        loaded = json.loads(result[4:])
        json.dumps(loaded, allow_nan=False)
    except (ValueError, RecursionError):
        return None, "not valid JSON"
    if not isinstance(loaded, dict) or loaded.get("status") not in FRAME_STATUSES:
        return None, "not a result frame"
    if not isinstance(loaded.get("message", ""), str) or (
        loaded["status"] == "ok" and "value" not in loaded
    ):
        return None, "not a result frame"
    return loaded, ""


def judge(
    wait_status: int | None, result: bytes, limits: dict[str, Any], cpu_used: float
) -> dict[str, Any]:
    """The verdict on a worker that ended: its frame counts only after a normal exit."""
    frame, problem = parse_frame(result)
    if frame is not None and frame.get("status") == "sandbox":
        return {"status": "crashed", "message": str(frame.get("message"))}
    if problem and problem != "a partial frame":
        return {"status": "crashed", "message": f"the result could not be read ({problem})"}
    assert wait_status is not None
    cpu_limit = float(limits["cpu_s"])
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        # Only the kernel sends these here (our own kills already have a verdict): at the CPU
        # limit, a pid-namespace init gets SIGKILL. rusage is sampled, hence the margin.
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu_used >= 0.8 * math.ceil(cpu_limit):
            return cpu_exceeded(cpu_limit)
        return {
            "status": "crashed",
            "message": f"crashed: killed by {signal_name(sig)} (after {cpu_used:.2f} s of CPU)",
        }
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1
    if code == 0 and frame is not None:
        return frame
    if code == _worker.EXIT_CHANNEL_CLOSED:
        reason = "the program closed the result channel (fd 3)"
        return {"status": "exited", "message": f"{reason}, so no result could be returned"}
    if code == _worker.EXIT_WORKER_FAILED:
        return {"status": "crashed", "message": "the worker failed after the program ran"}
    after = " after writing to the result channel itself" if frame or problem else ""
    return {
        "status": "exited",
        "message": f"the process exited with status {code}{after} before returning a result",
    }


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
        spare: Spare | None = None
        try:
            spare = Spare(candidate)
            ok = serve_job(job, spare).get("status") == "ok"
        except (OSError, _sandbox.SandboxError):
            ok = False
        finally:
            if spare is not None:
                spare.discard(set())
        if ok:
            return candidate
    return "basic"


WORKDIRS: str | None = None  # the folder the parent made for this server (removed at exit)
BASE = ""  # the namespace sandbox's mount point for its new root (an empty folder)
ROOTS: list[str] = []  # what a job may read besides the operating system's libraries
LAYOUT: _cgroup.Layout | None = None


def main(argv: list[str]) -> int:
    global WORKDIRS, BASE, ROOTS, LAYOUT
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    mode = options.get("--sandbox", "auto")
    WORKDIRS = options.get("--workdirs") or tempfile.mkdtemp(prefix="coursekit-exec-")
    BASE = tempfile.mkdtemp(prefix="root-", dir=WORKDIRS)
    ROOTS = _sandbox.readable_roots()
    try:
        return serve(mode, options.get("--budget", "auto"))
    finally:
        shutil.rmtree(WORKDIRS, ignore_errors=True)
        if LAYOUT is not None:
            LAYOUT.sweep()


def serve(mode: str, budget: str) -> int:
    global LAYOUT
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _sandbox._libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    LAYOUT = _cgroup.detect() if budget == "auto" else None
    if LAYOUT is not None:
        LAYOUT.sweep()
    gc.collect()
    gc.freeze()
    mode = probe(mode)
    _frames.write_frame(
        proto_out,
        {
            "hello": PROTOCOL,
            "sandbox": mode,
            "budget": LAYOUT.kind if LAYOUT is not None else "single-process",
            "python": sys.version,
            "numpy": np.__version__,
            "pid": os.getpid(),
        },
    )
    spares = [Spare(mode)]
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
            spares.append(Spare(mode))  # while the job is cleaned up, the next one gets ready
            spare.discard({waiting.pid for waiting in spares})
    finally:
        for spare in spares:
            spare.discard(set())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
