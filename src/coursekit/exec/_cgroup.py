"""One cgroup per job, so that one job has one budget (imported by ``_server.py``; stdlib only).

rlimits count per process: a job that forks four children may use five times its memory. A
cgroup counts the job's memory, processes and CPU time together, whatever it starts.

Two layouts are recognised, the first that works is used:

``cgroup2``
    the unified hierarchy with ``memory`` and ``pids`` available to the server's own cgroup
    (enabled in its ``cgroup.subtree_control`` if need be): ``memory.max`` (and
    ``memory.swap.max = 0``), ``pids.max``, CPU from ``cpu.stat``, OOM kills from
    ``memory.events``, and ``cgroup.kill``.
``cgroup1``
    the v1 ``memory`` and ``pids`` hierarchies (and ``cpuacct`` when mounted), as on hybrid
    machines: ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``), ``pids.max``,
    ``cpuacct.usage``, OOM kills from ``memory.oom_control``.

Without either (not root, or no delegation), ``detect()`` returns None and the server makes
jobs that cannot create processes at all, so that the per-process limits are the job's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

PREFIX = "coursekit-job-"


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _field(text: str, name: str) -> int:
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


class Layout:
    """Where job cgroups are made: controller -> parent directory (``""`` for the unified one)."""

    def __init__(self, kind: str, parents: dict[str, str]) -> None:
        self.kind = kind
        self.parents = parents
        self._count = 0

    def new_job(self) -> JobCgroup:
        self._count += 1
        return JobCgroup(self, f"{PREFIX}{os.getpid()}-{self._count}")

    def sweep(self) -> None:
        """Remove empty job cgroups of servers that died without cleaning up."""
        for parent in set(self.parents.values()):
            with contextlib.suppress(OSError):
                for name in os.listdir(parent):
                    if not name.startswith(PREFIX):
                        continue
                    owner = name[len(PREFIX) :].split("-")[0]
                    if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                        with contextlib.suppress(OSError):
                            os.rmdir(os.path.join(parent, name))


class JobCgroup:
    def __init__(self, layout: Layout, name: str) -> None:
        self.kind = layout.kind
        self.dirs = {ctrl: os.path.join(parent, name) for ctrl, parent in layout.parents.items()}
        made: list[str] = []
        try:
            for path in dict.fromkeys(self.dirs.values()):
                os.mkdir(path)
                made.append(path)
        except OSError:
            for path in made:
                with contextlib.suppress(OSError):
                    os.rmdir(path)
            raise
        self.cpu_start = 0.0

    def _file(self, ctrl: str, name: str) -> str:
        return os.path.join(self.dirs["" if self.kind == "cgroup2" else ctrl], name)

    def add(self, pid: int) -> None:
        for path in dict.fromkeys(self.dirs.values()):
            _write(os.path.join(path, "cgroup.procs"), str(pid))

    def limit(self, memory_bytes: int, processes: int) -> None:
        if self.kind == "cgroup2":
            _write(self._file("memory", "memory.max"), str(memory_bytes))
            with contextlib.suppress(OSError):  # no swap accounting: nothing to limit
                _write(self._file("memory", "memory.swap.max"), "0")
        else:
            _write(self._file("memory", "memory.limit_in_bytes"), str(memory_bytes))
            with contextlib.suppress(OSError):
                _write(self._file("memory", "memory.memsw.limit_in_bytes"), str(memory_bytes))
        _write(self._file("pids", "pids.max"), str(processes))
        self.cpu_start = self.cpu_seconds() or 0.0

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the job so far (None: not accounted here)."""
        try:
            if self.kind == "cgroup2":
                return _field(_read(self._file("cpu", "cpu.stat")), "usage_usec") / 1e6
            if "cpuacct" not in self.dirs:
                return None
            return int(_read(self._file("cpuacct", "cpuacct.usage"))) / 1e9
        except (OSError, ValueError):
            return None

    def job_cpu(self) -> float | None:
        used = self.cpu_seconds()
        return None if used is None else used - self.cpu_start

    def oom_kills(self) -> int:
        name = "memory.events" if self.kind == "cgroup2" else "memory.oom_control"
        try:
            return _field(_read(self._file("memory", name)), "oom_kill")
        except (OSError, ValueError):
            return 0

    def kill(self) -> None:
        if self.kind == "cgroup2":
            with contextlib.suppress(OSError):
                _write(self._file("", "cgroup.kill"), "1")
                return
        for _ in range(16):
            try:
                pids = [int(p) for p in _read(self._file("pids", "cgroup.procs")).split()]
            except (OSError, ValueError):
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Remove the job's cgroups once their processes are gone (a few tries, then give up)."""
        for attempt in range(50):
            left = [path for path in dict.fromkeys(self.dirs.values()) if os.path.isdir(path)]
            for path in left:
                with contextlib.suppress(OSError):
                    os.rmdir(path)
            if not any(os.path.isdir(path) for path in left):
                return
            self.kill()
            time.sleep(0.002 * (attempt + 1))


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, file-system type, super options) of each cgroup mount."""
    found = []
    for line in _read("/proc/self/mountinfo").splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[4], tail[0], tail[2].split(",")))
    return found


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path (``""`` for the unified hierarchy)."""
    paths = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for ctrl in controllers.split(",") if controllers else [""]:
            paths[ctrl] = path
    return paths


def _usable(parent: str, probe_file: str) -> bool:
    """Whether a child cgroup can be made under ``parent`` and offers ``probe_file``."""
    probe = os.path.join(parent, f"{PREFIX}{os.getpid()}-probe")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        return os.path.exists(os.path.join(probe, probe_file))
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)


def detect() -> Layout | None:
    if os.geteuid() != 0:
        return None
    try:
        mounts, own = _mounts(), _own_paths()
    except (OSError, ValueError):
        return None
    for point, fstype, _ in mounts:
        if fstype == "cgroup2" and "" in own:
            parent = os.path.normpath(point + own[""])
            if _enable_v2(parent) and _usable(parent, "memory.max"):
                return Layout("cgroup2", {"": parent})
    parents: dict[str, str] = {}
    for ctrl in ("memory", "pids", "cpuacct"):
        for point, fstype, options in mounts:
            if fstype == "cgroup" and ctrl in options and ctrl in own:
                parents[ctrl] = os.path.normpath(point + own[ctrl])
                break
    probes = {"memory": "memory.limit_in_bytes", "pids": "pids.max", "cpuacct": "cpuacct.usage"}
    parents = {c: p for c, p in parents.items() if _usable(p, probes[c])}
    if "memory" in parents and "pids" in parents:
        return Layout("cgroup1", parents)
    return None


def _enable_v2(parent: str) -> bool:
    try:
        available = _read(os.path.join(parent, "cgroup.controllers")).split()
        enabled = _read(os.path.join(parent, "cgroup.subtree_control")).split()
    except OSError:
        return False
    if not {"memory", "pids"} <= set(available):
        return False
    missing = [c for c in ("memory", "pids", "cpu") if c in available and c not in enabled]
    if missing:
        try:  # refused (EBUSY) when the cgroup has processes of its own and is not the root
            _write(
                os.path.join(parent, "cgroup.subtree_control"), " ".join(f"+{c}" for c in missing)
            )
        except OSError:
            return False
    return True
