"""Watching sandboxed jobs from outside: their processes, by the fresh uid each job runs as."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

# The uid range the namespace/setuid sandboxes draw a fresh uid from (see _server.py).
UID_LOW, UID_SPAN = 0x2000_0000, 0x4000_0000


def sandbox_uids() -> dict[int, list[int]]:
    """Live (non-zombie) processes running under a sandbox uid, by uid (one uid per job)."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields.get("Uid", "0").split()[0])
        if UID_LOW <= uid < UID_LOW + UID_SPAN and "Z" not in fields.get("State", ""):
            found.setdefault(uid, []).append(int(entry))
    return found


def sandbox_pids() -> list[int]:
    """Live (non-zombie) processes running under a sandbox uid."""
    return [pid for pids in sandbox_uids().values() for pid in pids]


def eventually(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Clean-up runs right after the reply goes out: give it a moment."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
