"""The fork server of ``coursekit.exec``: started as ``python -I _server.py [--sandbox MODE]``.

It is a standalone script (standard library and numpy only; it never imports coursekit): it
imports numpy once, then serves jobs read from its stdin and answers on its stdout, one at a
time. For each job it forks a worker that confines itself, runs the program and writes the
value ``solve()`` returned, as data, to a result pipe. The server enforces the wall clock and
the output cap, kills whatever the job left behind, and answers with one frame.

Frames, both ways: a 4-byte big-endian length, then UTF-8 JSON. Nothing is ever pickled.

Value encoding (the worker writes it, ``wire.decode`` in the parent reads it): ``None``,
``bool``, ``int``, ``str`` and finite ``float`` as themselves; a list as a JSON list; anything
else as an object tagged ``"$"``: ``{"$": "float", "v": "nan"|"inf"|"-inf"}``,
``{"$": "complex", "re": x, "im": y}``, ``{"$": "tuple", "items": [...]}``,
``{"$": "dict", "items": [[key, value], ...]}`` and
``{"$": "ndarray", "npy": base64 of np.save(..., allow_pickle=False)}``.

Sandbox modes, strongest first (``auto`` picks the strongest that works):

``namespace``
    root only. The worker enters a private mount namespace, remounts every mount read-only
    (recursively, ``mount_setattr``), mounts a fresh size-limited tmpfs as its working
    directory, then drops to a fresh unprivileged uid/gid used by no other process (no
    capabilities, ``PR_SET_NO_NEW_PRIVS``). It cannot write anywhere but its tmpfs, and
    ``RLIMIT_NPROC`` counts only its own processes.
``setuid``
    root without mount namespaces: the fresh uid only. Files not writable by "others" are
    safe; world-writable ones are not.
``basic``
    not root: rlimits, its own session, and a fresh working directory; no write protection.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import ctypes
import gc
import io
import json
import linecache
import math
import os
import resource
import secrets
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
import types
from typing import Any, NoReturn

import numpy as np
import numpy.fft
import numpy.linalg
import numpy.polynomial
import numpy.random

PROTOCOL = 1
RESULT_FD = 3
JOB_FD = 4
READ_CHUNK = 65536
STDERR_TAIL = 4096
TRACEBACK_TAIL = 4000

# Linux constants (x86_64 and aarch64 share these; mount_setattr is 442 on every arch).
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REC = 0x4000
MS_PRIVATE = 0x40000
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1

UID_LOW = 0x2000_0000
UID_SPAN = 0x4000_0000

_libc = ctypes.CDLL(None, use_errno=True)


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


class SandboxError(Exception):
    pass


class Unsupported(Exception):
    pass


# ---------------------------------------------------------------- framing


def read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any:
    head = read_exact(fd, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    body = read_exact(fd, size)
    if body is None:
        return None
    return json.loads(body)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_frame(fd: int, obj: Any) -> None:
    body = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
    write_all(fd, struct.pack(">I", len(body)) + body)


# ---------------------------------------------------------------- values as data


def encode(value: Any, depth: int = 0) -> Any:
    """Turn what solve() returned into JSON-able data; Unsupported for anything else."""
    if depth > 64:
        raise Unsupported("the value is nested more than 64 levels deep")
    if value is None or isinstance(value, bool | str):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, np.generic) and not isinstance(value, np.void | np.object_):
        return encode(value.item(), depth + 1)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        number = float(value)
        if math.isfinite(number):
            return number
        return {"$": "float", "v": "nan" if math.isnan(number) else repr(number)}
    if isinstance(value, complex):
        return {"$": "complex", "re": encode(value.real), "im": encode(value.imag)}
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {"$": "tuple", "items": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {
            "$": "dict",
            "items": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()],
        }
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject or value.dtype.kind == "V":
            raise Unsupported(f"a numpy array of dtype {value.dtype} is not plain data")
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(value), allow_pickle=False)
        return {"$": "ndarray", "npy": base64.b64encode(buffer.getvalue()).decode("ascii")}
    raise Unsupported(
        f"a value of type {type(value).__name__} is not plain data "
        "(return int, float, complex, str, bool, None, tuples, lists, dicts or numpy arrays)"
    )


# ---------------------------------------------------------------- the sandbox


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(err)}")


def confine_namespace() -> None:
    """A private mount namespace in which every mount is read-only."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make-rprivate /")
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    _check(
        _libc.syscall(
            SYS_MOUNT_SETATTR,
            AT_FDCWD,
            b"/",
            AT_RECURSIVE,
            ctypes.byref(attr),
            ctypes.sizeof(attr),
        ),
        "mount_setattr(/, AT_RECURSIVE, RDONLY)",
    )


def mount_workdir(workdir: str, uid: int, disk_mb: int) -> None:
    """A fresh, size-limited tmpfs owned by ``uid``: the only writable place."""
    options = f"size={disk_mb}m,nr_inodes=4096,mode=0700,uid={uid},gid={uid}".encode()
    _check(
        _libc.mount(b"tmpfs", workdir.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
        "mount tmpfs",
    )


def drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    if os.geteuid() == 0 or os.getuid() == 0:
        raise SandboxError("still root after setresuid")


def set_limits(limits: dict[str, Any]) -> None:
    # soft = hard: SIGKILL at the limit (a pid-namespace init ignores SIGXCPU); CPU overruns
    # are recognised from the worker's rusage.
    cpu = max(1, math.ceil(float(limits["cpu_s"])))
    pairs = [
        (resource.RLIMIT_CPU, (cpu, cpu)),
        (resource.RLIMIT_AS, (int(limits["memory_mb"]) << 20,) * 2),
        (resource.RLIMIT_FSIZE, (int(limits["file_mb"]) << 20,) * 2),
        (resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NPROC, (int(limits["processes"]),) * 2),
    ]
    for which, value in pairs:
        resource.setrlimit(which, value)


# ---------------------------------------------------------------- the worker


def traceback_tail(exc: BaseException, filename: str) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    return text[-TRACEBACK_TAIL:]


def run_program(source: str, filename: str) -> dict[str, Any]:
    """Compile and execute the program in a fresh module, call solve(); a result frame."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType("__problem__")
    module.__file__ = filename
    module.__dict__["__builtins__"] = builtins
    sys.modules["__problem__"] = module
    sys.argv = [filename]
    stage = "while running the program"
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
        exec(code, module.__dict__)
        solve = module.__dict__.get("solve")
        if not callable(solve):
            return {"status": "no-result", "message": f"{filename} defines no solve() function"}
        stage = "in solve()"
        value = solve()
        stage = "while encoding the result"
        return {"status": "ok", "value": encode(value)}
    except Unsupported as exc:
        return {"status": "no-result", "message": f"solve() returned {exc}"}
    except SystemExit as exc:
        code_ = exc.code
        shown = "sys.exit()" if code_ is None else f"sys.exit({code_!r})"
        return {
            "status": "exited",
            "message": f"called {shown} {stage}, before returning a result",
        }
    except MemoryError as exc:
        return {
            "status": "memory",
            "message": "memory limit exceeded: MemoryError " + stage,
            "traceback": traceback_tail(exc, filename),
        }
    except BaseException as exc:
        summary = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {
            "status": "error",
            "message": f"raised {summary} ({stage})",
            "traceback": traceback_tail(exc, filename),
        }


WARM_UP = """\
import numpy as np
def solve():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    s = a @ a.T / np.sqrt(4)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return {"det": float(np.linalg.det(a)), "w": w, "rows": w.sum(axis=1).tolist(), "n": (1, "x")}
"""


def warm_up() -> None:
    """Run a small numpy program while waiting for the job.

    A forked worker shares the server's pages copy-on-write; the first run of anything pays a
    few hundred page faults (about 1 ms). Paying them here, before the job arrives, takes
    them off the job's time. Nothing of it stays behind: its module and source are dropped,
    and it does not touch numpy's global random state.
    """
    encode(run_program(WARM_UP, "<warm-up>"))
    sys.modules.pop("__problem__", None)
    linecache.cache.pop("<warm-up>", None)


def worker(mode: str, workdir: str, uid: int, fds: list[int]) -> NoReturn:
    """A forked worker: confine itself, wait for its one job on fd 4, run it, answer on fd 3.

    Never returns. In the namespace sandbox it is pid 1 of its own pid namespace: when it dies,
    the kernel kills every process the program started.
    """
    status = 70
    try:
        os.setsid()
        out_w, err_w, res_w, job_r = fds
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(res_w, RESULT_FD)
        os.dup2(job_r, JOB_FD)
        os.closerange(JOB_FD + 1, 1 << 16)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            if mode == "namespace":
                confine_namespace()
        except (OSError, SandboxError) as exc:
            write_frame(
                RESULT_FD, {"status": "sandbox", "message": f"sandbox set-up failed: {exc}"}
            )
            os._exit(71)
        warm_up()
        job = read_frame(JOB_FD)
        if not isinstance(job, dict):
            os._exit(0)  # the server went away, or discarded this spare
        os.close(JOB_FD)
        limits = job["limits"]
        try:
            if mode == "namespace":
                mount_workdir(workdir, uid, int(limits["disk_mb"]))
            if mode in ("namespace", "setuid"):
                drop_privileges(uid)
            os.chdir(workdir)
            set_limits(limits)
            # After the uid change (which clears it): die with the server.
            _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        except (OSError, SandboxError) as exc:
            write_frame(
                RESULT_FD, {"status": "sandbox", "message": f"sandbox set-up failed: {exc}"}
            )
            os._exit(71)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        tempfile.tempdir = None
        frame = run_program(str(job["source"]), str(job["filename"]))
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        if mode == "setuid":
            kill_all_as_self()  # what the program started runs as our private uid
        try:
            write_frame(RESULT_FD, frame)
        except MemoryError:
            write_frame(RESULT_FD, {"status": "memory", "message": "no memory left for the result"})
        status = 0
    except BaseException:
        status = 72
    os._exit(status)


def kill_all_as_self() -> None:
    for _ in range(64):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:  # ESRCH: nothing left
            return


def kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` (a fork bomb included) from a short-lived helper."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            kill_all_as_self()
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
        # Inside the folder the parent made for this server: if the server is killed before it
        # can clean up, the parent removes the whole folder.
        self.workdir = tempfile.mkdtemp(prefix="job-", dir=WORKDIRS)
        if mode == "setuid":
            os.chown(self.workdir, self.uid, self.uid)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        job_r, self.job_w = os.pipe()
        self.out, self.err, self.res = out_r, err_r, res_r
        child_fds = [out_w, err_w, res_w, job_r]
        if mode == "namespace":
            # The worker is pid 1 of a pid namespace of its own: when it dies, the kernel kills
            # every process the program started. Our own children go back to our namespace.
            _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        try:
            self.pid = os.fork()
            if self.pid == 0:
                worker(mode, self.workdir, self.uid, child_fds)
        finally:
            if mode == "namespace":
                _check(_libc.setns(own_pid_namespace(), CLONE_NEWPID), "setns(own pid namespace)")
        self.pidfd = os.pidfd_open(self.pid)
        self.reaped = False
        for fd in child_fds:
            os.close(fd)

    def kill(self) -> None:
        if self.pidfd >= 0 and not self.reaped:
            with_suppressed(signal.pidfd_send_signal, self.pidfd, signal.SIGKILL)
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
            with_suppressed(self.wait)
        if self.mode == "setuid":
            kill_uid(self.uid)
        elif self.mode == "basic":
            with_suppressed(os.killpg, self.pid, signal.SIGKILL)
        if self.pidfd >= 0:
            with_suppressed(os.close, self.pidfd)
        if self.mode != "namespace":  # there, the kernel takes the job's processes with it
            reap_orphans(keep)
        cleanup_workdir(self.workdir, self.mode)


def serve_job(job: dict[str, Any], spare: Spare, after_dispatch: Any = None) -> dict[str, Any]:
    """Hand ``job`` to the waiting worker and watch it; the reply frame."""
    limits = job["limits"]
    output_cap = int(limits["output_kb"]) << 10
    result_cap = int(limits["result_kb"]) << 10
    wall = float(limits["wall_s"])
    start = time.perf_counter()
    deadline = start + wall
    with contextlib.suppress(OSError):  # if the worker died setting up, its result pipe says why
        write_frame(spare.job_w, job)
    os.close(spare.job_w)
    spare.job_w = -1
    if after_dispatch is not None:
        after_dispatch()
    out = Capture(output_cap)
    err = Capture(output_cap)
    res = Capture(result_cap + 8)
    captures = {spare.out: out, spare.err: err, spare.res: res}
    open_fds = dict(captures)
    verdict: dict[str, Any] | None = None
    wait_status: int | None = None
    cpu_used = 0.0
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            verdict = {
                "status": "timeout",
                "message": f"wall-clock limit exceeded: still running after {wall:g} s",
            }
            break
        ready, _, _ = select.select([*open_fds, spare.pidfd], [], [], remaining)
        for fd in ready:
            if fd != spare.pidfd:
                read_into(fd, open_fds)
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
        if size is not None and len(res.head) >= 4 + size:
            break  # a complete result: whatever the worker does next does not matter
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
        if wait_status is None and len(res.head) < 4 + (res.frame_size() or 0):
            wait_status, cpu_used = spare.wait()
        verdict = judge(wait_status, bytes(res.head), limits, cpu_used)
    verdict["duration"] = duration
    verdict["stdout"] = out.head.decode("utf-8", "replace")
    verdict["stdout_bytes"] = out.total
    verdict["stderr_tail"] = err.tail.decode("utf-8", "replace")
    verdict["stderr_bytes"] = err.total
    verdict["sandbox"] = spare.mode
    return verdict


def read_into(fd: int, open_fds: dict[int, Capture]) -> None:
    if fd not in open_fds:
        return
    chunk = os.read(fd, READ_CHUNK)
    if chunk:
        open_fds[fd].add(chunk)
    else:
        del open_fds[fd]


def judge(
    wait_status: int | None, result: bytes, limits: dict[str, Any], cpu_used: float
) -> dict[str, Any]:
    frame: dict[str, Any] | None = None
    if len(result) >= 4:
        (size,) = struct.unpack(">I", result[:4])
        if len(result) == 4 + size:
            try:  # the program can write to the result pipe itself: it must parse and re-encode
                loaded = json.loads(result[4:])
                json.dumps(loaded, allow_nan=False)
            except (ValueError, RecursionError):
                loaded = None
            if isinstance(loaded, dict):
                frame = loaded
    if frame is not None and frame.get("status") != "sandbox":
        return frame
    if frame is not None:
        return {"status": "crashed", "message": str(frame.get("message"))}
    if wait_status is None:  # a complete frame, but not one the worker wrote
        return {"status": "crashed", "message": "the result could not be read (not valid JSON)"}
    cpu_limit = float(limits["cpu_s"])
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        # Only the kernel sends these here (our own kills already have a verdict): at the CPU
        # limit, a pid-namespace init gets SIGKILL. rusage is sampled, hence the margin.
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu_used >= 0.8 * math.ceil(cpu_limit):
            return {
                "status": "timeout",
                "message": f"CPU time limit exceeded ({cpu_limit:g} s of CPU)",
            }
        return {
            "status": "crashed",
            "message": f"crashed: killed by {signal_name(sig)} (after {cpu_used:.2f} s of CPU)",
        }
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else -1
    return {
        "status": "exited",
        "message": f"the process exited with status {code} before returning a result",
    }


def with_suppressed(func: Any, *args: Any) -> None:
    with contextlib.suppress(OSError):
        func(*args)


def cleanup_workdir(workdir: str, mode: str) -> None:
    if mode == "namespace":
        try:
            os.rmdir(workdir)  # the tmpfs lived in the worker's namespace; this stayed empty
            return
        except OSError:
            pass
    shutil.rmtree(workdir, ignore_errors=True)


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
        spare = Spare(candidate)
        try:
            ok = serve_job(job, spare).get("status") == "ok"
        except (OSError, SandboxError):
            ok = False
        finally:
            spare.discard(set())
        if ok:
            return candidate
    return "basic"


WORKDIRS: str | None = None  # where job folders are made (None: the system's temp folder)


def main(argv: list[str]) -> int:
    global WORKDIRS
    mode = "auto"
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    mode = options.get("--sandbox", mode)
    WORKDIRS = options.get("--workdirs")
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    gc.collect()
    gc.freeze()
    mode = probe(mode)
    write_frame(
        proto_out,
        {
            "hello": PROTOCOL,
            "sandbox": mode,
            "python": sys.version,
            "numpy": np.__version__,
            "pid": os.getpid(),
        },
    )
    spares = [Spare(mode)]

    def fork_next() -> None:  # while the job runs, the next worker gets ready
        spares.append(Spare(mode))

    while True:
        job = read_frame(proto_in)
        if not isinstance(job, dict):
            for spare in spares:
                spare.discard(set())
            return 0
        spare = spares.pop(0)
        try:
            reply = serve_job(job, spare)
        except Exception as exc:  # a bug here must not take the whole run down
            reply = {"status": "crashed", "message": f"the runner failed: {exc!r}"}
        reply["id"] = job.get("id")
        write_frame(proto_out, reply)
        fork_next()
        spare.discard({waiting.pid for waiting in spares})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
