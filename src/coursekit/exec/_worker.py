"""The worker side of ``coursekit.exec`` (imported by ``_server.py``; stdlib and numpy only).

A worker is forked by the server ahead of its job: it confines itself (``_sandbox``), warms up
unless its job is already there, waits for its one job on fd 4, compiles and runs the program
in a fresh module, calls ``solve()`` and writes the value, as data, in one frame on fd 3, then
exits with status 0. The server counts that frame only if the worker then ends normally within
its limits.

Value encoding (``wire.decode`` in the parent reads it): ``None``, ``bool``, ``int``, ``str``
and finite ``float`` as themselves; a list as a JSON list; anything else as an object tagged
``"$"``: ``{"$": "float", "v": "nan"|"inf"|"-inf"}``, ``{"$": "complex", "re": x, "im": y}``,
``{"$": "tuple", "items": [...]}``, ``{"$": "dict", "items": [[key, value], ...]}`` and
``{"$": "ndarray", "npy": base64 of np.save(..., allow_pickle=False)}``.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import io
import linecache
import math
import os
import select
import signal
import sys
import tempfile
import traceback
import types
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from coursekit.exec import _frames, _sandbox
else:  # beside it, on sys.path while _server.py imports it
    import _frames
    import _sandbox
import numpy as np

RESULT_FD = 3
JOB_FD = 4
TRACEBACK_TAIL = 4000
#: Python refuses to print ints of more than 4300 digits (about 14,300 bits).
MAX_INT_BITS = 14_000
CANNOT_ENCODE = "solve() returned a value that cannot be encoded: "

#: Exit statuses of a worker that the server explains (any other is the program's own).
EXIT_CHANNEL_CLOSED = 73  # fd 3 was closed or replaced by the program
EXIT_WORKER_FAILED = 72  # the worker itself failed after the program ran
EXIT_SANDBOX_FAILED = 71


class Unsupported(Exception):
    pass


def encode(value: Any, depth: int = 0) -> Any:
    """Turn what solve() returned into JSON-able data; Unsupported for anything else."""
    if depth > 64:
        raise Unsupported("the value is nested more than 64 levels deep")
    if value is None or isinstance(value, bool | str):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, np.generic) and not isinstance(value, np.void | np.object_):
        return encode(value.item(), depth + 1)
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise Unsupported(
                f"a value that cannot be encoded: an int of {value.bit_length()} bits "
                "(return it as a float, a string, or its logarithm)"
            )
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
    except RecursionError:
        return {"status": "no-result", "message": CANNOT_ENCODE + "it is nested too deeply"}
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


def warm_up_while_idle(job_fd: int) -> bool:
    """Warm up (`warm_up`) unless the job, or the end of its pipe, is already there; whether
    it did. A job that is waiting would only wait longer: when programs queue (a cold check
    of a large course), the warm-up's page faults were ~3 ms of CPU per job, a fifth of each
    job's cost, and the cores were what the jobs queued for."""
    waiting, _, _ = select.select([job_fd], [], [], 0)
    if waiting:
        return False
    warm_up()
    return True


def result_channel() -> tuple[int, int]:
    info = os.fstat(RESULT_FD)
    return info.st_dev, info.st_ino


def send_result(frame: dict[str, Any], channel: tuple[int, int]) -> NoReturn:
    """Write the one result frame on fd 3 and exit 0; 73 if the program took fd 3 away."""
    try:
        data = _frames.frame_bytes(frame)
    except (ValueError, RecursionError) as exc:
        data = _frames.frame_bytes({"status": "no-result", "message": CANNOT_ENCODE + str(exc)})
    try:
        if result_channel() != channel:
            os._exit(EXIT_CHANNEL_CLOSED)
        _frames.write_all(RESULT_FD, data)
    except OSError:
        os._exit(EXIT_CHANNEL_CLOSED)
    os._exit(0)


def sandbox_failed(exc: BaseException) -> NoReturn:
    _frames.write_frame(
        RESULT_FD, {"status": "sandbox", "message": f"sandbox set-up failed: {exc}"}
    )
    os._exit(EXIT_SANDBOX_FAILED)


def worker(mode: str, base: str, uid: int, fds: list[int], roots: list[str]) -> NoReturn:
    """A forked worker: confine itself, wait for its one job on fd 4, run it, answer on fd 3.

    Never returns. In the namespace sandbox it is pid 1 of its own pid namespace: when it dies,
    the kernel kills every process the program started. The job frame's ``processes`` is what
    ``RLIMIT_NPROC`` allows: the job's limit when its cgroup counts them, else 1 (none).
    """
    channel = (-1, -1)
    try:
        os.setsid()
        # Killed with the server from the start, not only once it holds a job: a spare whose
        # server was killed would go on building its root in the server's folder, after the
        # parent had removed that folder (the uid change clears this; it is set again then).
        _sandbox.die_with_parent()
        out_w, err_w, res_w, job_r = fds
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(res_w, RESULT_FD)
        os.dup2(job_r, JOB_FD)
        os.closerange(JOB_FD + 1, 1 << 16)
        channel = result_channel()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            if mode == "namespace":
                _sandbox.enter_namespaces(base, roots)
            elif mode == "setuid":
                _sandbox.reach_through_descriptors(roots)
        except (OSError, _sandbox.SandboxError) as exc:
            sandbox_failed(exc)
        warm_up_while_idle(JOB_FD)
        job = _frames.read_frame(JOB_FD)
        if not isinstance(job, dict):
            os._exit(0)  # the server went away, or discarded this spare
        os.close(JOB_FD)
        limits = job["limits"]
        try:
            workdir = base
            if mode == "namespace":
                workdir = _sandbox.mount_job_dir(uid, int(limits["disk_mb"]))
            if mode in ("namespace", "setuid"):
                _sandbox.drop_privileges(uid, dumpable=mode == "setuid")
            os.chdir(workdir)
            _sandbox.set_limits(limits, int(job["processes"]))
            # After the uid change (which clears it): die with the server.
            _sandbox.die_with_parent()
        except (OSError, _sandbox.SandboxError) as exc:
            sandbox_failed(exc)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        tempfile.tempdir = None
        frame = run_program(str(job["source"]), str(job["filename"]))
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        # What the program started is killed by the server once this worker has ended (its
        # cgroup, or its uid); without a cgroup it could start nothing.
        send_result(frame, channel)
    except MemoryError:
        send_result({"status": "memory", "message": "no memory left for the result"}, channel)
    except BaseException as exc:
        with_stderr(f"coursekit worker failed: {exc!r}")
    os._exit(EXIT_WORKER_FAILED)


def with_stderr(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, text.encode("utf-8", "replace") + b"\n")


def kill_all_as_self() -> None:
    for _ in range(64):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:  # ESRCH: nothing left
            return
