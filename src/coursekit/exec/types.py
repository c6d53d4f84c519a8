"""The runner's small typed values: what to run, within which limits, and what came of it."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import platform
import sys
from dataclasses import field
from functools import cache
from importlib import metadata
from typing import Any

from coursekit.records import record

#: Bumped whenever the runner's behaviour changes what an outcome can be (invalidates caches).
RUNNER_VERSION = "2"


class Status(enum.StrEnum):
    OK = "ok"
    ERROR = "error"  # the program raised
    TIMEOUT = "timeout"  # wall clock or CPU time
    MEMORY = "memory"  # address-space limit (MemoryError)
    OUTPUT = "output"  # stdout/stderr or the returned value too large
    CRASHED = "crashed"  # killed by a signal (segfault, abort, ...), or the runner failed
    EXITED = "exited"  # sys.exit()/os._exit() before a result
    NO_RESULT = "no-result"  # no solve(), or solve() returned something that is not data


@record(frozen=True)
class Limits:
    """Per-program limits. Defaults suit small numpy problems."""

    wall_s: float = 10.0  # wall clock, enforced by the server (catches sleeping programs)
    cpu_s: float = 10.0  # the job's cgroup CPU time, and RLIMIT_CPU per process
    memory_mb: int = 1024  # the job's cgroup memory, and RLIMIT_AS per process
    output_kb: int = 1024  # stdout + stderr; beyond it the program is stopped
    result_kb: int = 16384  # the encoded value solve() returns
    processes: int = 32  # pids.max of the job's cgroup; without a cgroup, none may be started
    file_mb: int = 16  # RLIMIT_FSIZE: largest file the program may write
    disk_mb: int = 64  # size of the private tmpfs working directory (namespace sandbox)
    open_files: int = 256  # RLIMIT_NOFILE

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@record(frozen=True)
class Job:
    """One program to run: ``key`` identifies it to the caller; ``filename`` shows in tracebacks."""

    key: str
    source: str
    filename: str = "solution.py"

    def fingerprint(self, limits: Limits) -> str:
        """A cache key: the source, the limits, and the Python and numpy that run it."""
        payload = {
            **_run_environment(limits),
            "source": self.source,
            "filename": self.filename,
        }
        data = json.dumps(payload, sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()


@cache
def _run_environment(limits: Limits) -> dict[str, Any]:
    """What every job's fingerprint shares: worked out once, not once per program (a
    1,000-chapter course fingerprints 4,000 of them on every run)."""
    return {
        "runner": RUNNER_VERSION,
        "limits": limits.as_dict(),
        "python": sys.version,
        "machine": platform.machine(),
        "numpy": _numpy_version(),
    }


@cache
def _numpy_version() -> str:
    try:
        return metadata.version("numpy")
    except metadata.PackageNotFoundError:
        return "absent"


@record(frozen=True)
class Outcome:
    """What came of one job. ``value`` is plain data (and numpy arrays) when status is ok."""

    key: str
    status: Status
    value: Any = None
    message: str = ""
    traceback: str = ""
    stdout: str = ""
    stderr_tail: str = ""
    duration: float = 0.0
    sandbox: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK
