"""How a worker confines itself (imported by ``_server.py``; standard library only).

``namespace`` (root): the worker is pid 1 of a new pid namespace (the server unshares it before
forking) and enters new mount, network, IPC and UTS namespaces. Its root becomes a small
read-only tmpfs holding only bind mounts, read-only, of what the interpreter needs: its
prefixes, numpy's site-packages, and the operating system's ``/usr`` and library directories
(never ``/etc``, ``/home``, ``/root``, the course or the repository), a few device nodes, and
a fresh ``/proc`` that lists the job's processes only. The network namespace has nothing but a
loopback that is down; the IPC namespace dies with the job. When the job arrives, a fresh
size-limited tmpfs is mounted on ``/job`` (its working directory), and the worker drops to a
fresh unprivileged uid/gid used by no other process, with ``PR_SET_NO_NEW_PRIVS``.

``setuid`` (root, no namespaces): the fresh uid only. The interpreter's files stay reachable
where the uid could not traverse to them (a pyenv under a 0700 ``/root``) through descriptors
opened beforehand (``/proc/self/fd/N``).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import platform
import resource
import signal
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_MOVE = 0x2000
MNT_DETACH = 0x2
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
SYS_MOUNT_SETATTR = 442  # the same number on every architecture
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}.get(platform.machine())
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38

#: Inside the namespace sandbox: the job's working directory (a tmpfs of its own).
JOB_DIR = "/job"
#: The folder of the new root that the job is chrooted into.
INNER = "/fs"
#: Operating-system directories (or their symlinks) the interpreter and its libraries load from.
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
#: Single files from /etc that hold nothing about the host: the loader's cache only.
SYSTEM_FILES = ("/etc/ld.so.cache",)
#: A /tmp of the job's own, where a root lies below the host's /tmp (sticky, like the host's).
_TMP_OPTIONS = "size={mb}m,nr_inodes=4096,mode=1777"
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

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


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {source or ''} on {target}",
    )


def readable_roots() -> list[str]:
    """The directories a job may read: the interpreter's prefixes and numpy's site-packages.

    Computed in the server (before any job), so that nothing a program does can add to it.
    """
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates.add(os.path.dirname(os.path.realpath(sys.executable)))
    numpy = sys.modules.get("numpy")
    if numpy is not None and numpy.__file__:
        candidates.add(os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__))))
    real = sorted({os.path.realpath(path) for path in candidates if os.path.isdir(path)})
    # Nested ones come with their parent; "/" itself would defeat the point.
    kept: list[str] = []
    for path in real:
        if path != "/" and not any(path.startswith(parent + "/") for parent in kept):
            kept.append(path)
    return kept


def enter_namespaces(base: str, roots: list[str]) -> None:
    """New mount/network/IPC/UTS namespaces and a read-only root of ``roots`` only.

    ``base`` is an existing empty directory used as the new root's mount point.
    """
    check(
        _libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
        "unshare(mount, network, IPC, UTS namespaces)",
    )
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    check(_libc.sethostname(b"job", 3), "sethostname")
    _mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    # The root is built from inside that tmpfs, by paths relative to it. Should the host remove
    # `base` meanwhile (the parent cleaning up after a killed server), the kernel detaches the
    # mount, and what follows still lands in it or fails: a path spelled from `base` would
    # lead `makedirs` to make the removed folders again, on the host's disk.
    os.chdir(base)
    here = "."
    # The job's root is a folder of the new root, not the new root itself: a chrooted process
    # may not create user namespaces (the kernel refuses it EPERM), and so cannot regain
    # capabilities over mounts of its own.
    inner = here + INNER
    os.mkdir(inner, 0o755)
    if any(path == "/tmp" or path.startswith("/tmp/") for path in roots):
        # A root lies below /tmp (a virtualenv in a clone under /tmp, as a CI runner may have
        # it), so /tmp must be a folder holding its bind mount rather than a link to the job's
        # folder: a tmpfs of its own, which `mount_job_dir` makes writable and sizes per job.
        os.mkdir(inner + "/tmp", 0o755)
        _mount("tmpfs", inner + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, _TMP_OPTIONS.format(mb=1))
    for path in (*SYSTEM_DIRS, *roots):
        _bind_tree(inner, path)
    for path in (*SYSTEM_FILES, *DEVICES):
        if os.path.exists(path):
            _bind_file(inner, path)
    with contextlib.suppress(FileExistsError):
        os.symlink("/proc/self/fd", inner + "/dev/fd")
    if not os.path.lexists(inner + "/tmp"):  # programs that write to /tmp by name
        os.symlink(JOB_DIR, inner + "/tmp")
    for name in ("proc", JOB_DIR.lstrip("/")):
        os.makedirs(os.path.join(inner, name), mode=0o755, exist_ok=True)
    _mount("proc", inner + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    attr = _MountAttr(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    check(
        _libc.syscall(
            SYS_MOUNT_SETATTR,
            AT_FDCWD,
            here.encode(),
            AT_RECURSIVE,
            ctypes.byref(attr),
            ctypes.sizeof(attr),
        ),
        "mount_setattr(new root, AT_RECURSIVE, RDONLY|NOSUID)",
    )
    _switch_root(here)
    check(_libc.chroot(INNER.encode()), "chroot")
    os.chdir("/")


def _bind_tree(base: str, path: str) -> None:
    if os.path.islink(path):  # /lib -> usr/lib on a merged-/usr system: the link, not a mount
        target = base + path
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        return
    if not os.path.isdir(path) or os.path.lexists(base + path):
        return
    os.makedirs(base + path, mode=0o755)
    _mount(path, base + path, None, MS_BIND | MS_REC)


def _bind_file(base: str, path: str) -> None:
    target = base + path
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    with open(target, "w"):
        pass
    _mount(path, target, None, MS_BIND)


def _switch_root(base: str) -> None:
    os.chdir(base)
    # pivot_root(".", ".") stacks the old root on the new one; detaching it leaves no way back
    # to the host's files. Where it is refused (an initramfs root), the new root is moved over
    # "/" instead; either way the job is then chrooted below it.
    if SYS_PIVOT_ROOT is not None and _libc.syscall(SYS_PIVOT_ROOT, b".", b".") == 0:
        check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    else:
        _mount(base, "/", None, MS_MOVE)
        check(_libc.chroot(b"."), "chroot")
    os.chdir("/")


def mount_job_dir(uid: int, disk_mb: int) -> str:
    """The job's working directory: a fresh, size-limited tmpfs owned by ``uid``."""
    options = f"size={disk_mb}m,nr_inodes=4096,mode=0700,uid={uid},gid={uid}"
    _mount("tmpfs", JOB_DIR, "tmpfs", MS_NOSUID | MS_NODEV, options)
    if os.path.isdir("/tmp") and not os.path.islink("/tmp"):
        # /tmp is the tmpfs `enter_namespaces` made below a root under /tmp: writable for this
        # job (its mount only; the bind mounts inside it stay read-only), with the same size
        # limit as the job's folder.
        flags = MS_REMOUNT | MS_NOSUID | MS_NODEV
        _mount(None, "/tmp", None, flags, _TMP_OPTIONS.format(mb=disk_mb))
        attr = _MountAttr(0, MOUNT_ATTR_RDONLY, 0, 0)
        check(
            _libc.syscall(
                SYS_MOUNT_SETATTR, AT_FDCWD, b"/tmp", 0, ctypes.byref(attr), ctypes.sizeof(attr)
            ),
            "mount_setattr(/tmp, clear RDONLY)",
        )
    return JOB_DIR


def reach_through_descriptors(roots: list[str]) -> None:
    """Keep ``roots`` importable after the uid change, even under a directory it cannot enter.

    Each root is opened now (as root) and its entries on ``sys.path`` are rewritten to
    ``/proc/self/fd/N/...``: a lookup through the descriptor starts at the directory itself,
    so the 0700 parents are never traversed. The descriptors are read-only paths (``O_PATH``).
    """
    mapping: dict[str, str] = {}
    for root in roots:
        fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
        mapping[root] = f"/proc/self/fd/{fd}"

    def through(entry: str) -> str:
        real = os.path.realpath(entry) if entry else entry
        for root, via in mapping.items():
            if real == root or real.startswith(root + "/"):
                return via + real[len(root) :]
        return entry

    sys.path[:] = [through(entry) for entry in sys.path]
    # Packages already imported look for their submodules in their own __path__.
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [through(entry) for entry in search]
    sys.path_importer_cache.clear()


def drop_privileges(uid: int, *, dumpable: bool = False) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    if dumpable:  # /proc/self/fd must belong to the process itself (setuid mode only)
        check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
    if os.geteuid() == 0 or os.getuid() == 0:
        raise SandboxError("still root after setresuid")


def die_with_parent() -> None:
    """SIGKILL when the server dies (set after the uid change, which clears it)."""
    check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def set_limits(limits: dict[str, Any], processes: int) -> None:
    """Per-process limits. ``processes`` is the job's (1 when no cgroup counts them)."""
    # soft = hard: SIGKILL at the limit (a pid-namespace init ignores SIGXCPU); CPU overruns
    # are recognised from the worker's rusage.
    cpu = max(1, math.ceil(float(limits["cpu_s"])))
    pairs = [
        (resource.RLIMIT_CPU, (cpu, cpu)),
        (resource.RLIMIT_AS, (int(limits["memory_mb"]) << 20,) * 2),
        (resource.RLIMIT_FSIZE, (int(limits["file_mb"]) << 20,) * 2),
        (resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_NPROC, (processes, processes)),
    ]
    for which, value in pairs:
        resource.setrlimit(which, value)
