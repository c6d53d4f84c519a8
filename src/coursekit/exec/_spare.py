"""A worker forked ahead of its job, and what is done to its processes afterwards (imported by
``_server.py``; standard library only)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from dataclasses import field
from typing import TYPE_CHECKING, Any

from coursekit.records import record

if TYPE_CHECKING:
    from coursekit.exec import _cgroup, _sandbox, _worker
else:  # beside it, on sys.path while _server.py imports it
    import _cgroup
    import _sandbox
    import _worker

UID_LOW = 0x2000_0000
UID_SPAN = 0x4000_0000


@record
class Setting:
    """What every spare of one server shares, fixed at start-up."""

    workdirs: str  # the folder the parent made for this server (removed at exit)
    base: str = ""  # the namespace sandbox's mount point for its new root (an empty folder)
    roots: list[str] = field(default_factory=list)  # what a job may read besides the OS's libraries
    layout: _cgroup.Layout | None = None  # where job cgroups are made (None: single-process)


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


class Spare:
    """A worker forked ahead of its job, confining itself while the previous job runs."""

    def __init__(self, mode: str, setting: Setting) -> None:
        self.mode = mode
        self.uid = UID_LOW + secrets.randbelow(UID_SPAN)
        # The namespace sandbox needs no folder of the host's: its root and working directory
        # are tmpfs mounts of its own, on top of the (empty) server folder.
        if mode == "namespace":
            self.workdir = ""
        else:
            # Inside the folder the parent made for this server: if the server is killed
            # before it can clean up, the parent removes the whole folder.
            self.workdir = tempfile.mkdtemp(prefix="job-", dir=setting.workdirs)
            if mode == "setuid":
                os.chown(self.workdir, self.uid, self.uid)
        self.cgroup = None
        if setting.layout is not None:
            # Without its cgroup (the hierarchy went away?) the job may not create processes.
            with contextlib.suppress(OSError):
                self.cgroup = setting.layout.new_job()
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
                    setting.base if mode == "namespace" else self.workdir,
                    self.uid,
                    child_fds,
                    setting.roots,
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
