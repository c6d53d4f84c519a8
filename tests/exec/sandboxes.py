"""Watching sandboxed jobs from outside: their processes, by the fresh uid each job runs as."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from coursekit.exec import Runner

# The uid range the namespace/setuid sandboxes draw a fresh uid from (see _server.py).
UID_LOW, UID_SPAN = 0x2000_0000, 0x4000_0000


def sandbox_uids(under: Iterable[int] = ()) -> dict[int, list[int]]:
    """Live (non-zombie) processes running under a sandbox uid, by uid (one uid per job).

    With ``under`` (server pids), only the processes descending from them: other test workers,
    and other checkouts' test suites on the same machine, run sandboxed jobs too.
    """
    found: dict[int, list[int]] = {}
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parents[int(entry)] = int(fields.get("PPid", "0"))
        uid = int(fields.get("Uid", "0").split()[0])
        if UID_LOW <= uid < UID_LOW + UID_SPAN and "Z" not in fields.get("State", ""):
            found.setdefault(uid, []).append(int(entry))
    roots = set(under)
    if not roots:
        return found

    def descends(pid: int) -> bool:
        for _ in range(4096):  # a chain, never a cycle; bounded all the same
            pid = parents.get(pid, 0)
            if pid in roots:
                return True
            if pid <= 1:
                return False
        return False

    mine = {uid: [pid for pid in pids if descends(pid)] for uid, pids in found.items()}
    return {uid: pids for uid, pids in mine.items() if pids}


def sandbox_pids(under: Iterable[int] = ()) -> list[int]:
    """Live (non-zombie) processes running under a sandbox uid (descending from ``under``)."""
    return [pid for pids in sandbox_uids(under).values() for pid in pids]


def servers_of(runner: Runner) -> list[int]:
    """The pids of a runner's fork servers."""
    return [server.proc.pid for server in runner._servers]


def eventually(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Clean-up runs right after the reply goes out: give it a moment."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
