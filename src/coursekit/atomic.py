"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half.

The new content goes to a temporary file in the same directory, is flushed and fsynced, then
`os.replace`d over the target; the directory is fsynced so the rename itself survives a crash.
The target's permission bits are kept. Course files are written durably; cache entries skip
the fsyncs (`durable=False`): one lost in a crash is only a miss.

Two test hooks mark every *write boundary* (after each chunk written, each rename, each journal
step of `coursekit.journal`): `COURSEKIT_TEST_WRITE_DELAY` (seconds, a float) makes the writer
write in small chunks and sleep at each boundary, so a test can kill the process mid-write;
`COURSEKIT_TEST_KILL_AT=N` makes the process SIGKILL itself at its N-th boundary, so a test can
stop a command at every boundary in turn, deterministically.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

_DELAY_ENV = "COURSEKIT_TEST_WRITE_DELAY"
_KILL_ENV = "COURSEKIT_TEST_KILL_AT"
_CHUNK = 4096
_boundaries_passed = 0


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace (or create) `path` with `data`, atomically."""
    with _replacing(path) as handle:
        write_all(handle.fileno(), data, hooked=durable)
        handle.flush()
        if durable:
            os.fsync(handle.fileno())
    if durable:
        fsync_dir(path.parent)
        boundary()


def atomic_write_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """Replace (or create) `path` with the chunks' bytes, atomically, never holding them all:
    a cache's large files (not fsynced: a lost one is only a miss)."""
    with _replacing(path) as handle:
        for chunk in chunks:
            handle.write(chunk)


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A temporary file beside `path` (with its mode) that replaces it once the block is done,
    and is removed instead if the block fails."""
    mode = mode_of(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` as UTF-8 (newlines kept exactly as given), atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_all(fd: int, data: bytes, hooked: bool = True) -> None:
    """Write every byte of `data` to `fd` (in small chunks, each a boundary, under a test hook).

    Cache entries pass `hooked=False`: the hooks are about course files, and a check that
    writes dozens of entries would otherwise drown the boundaries a test means to hit.
    """
    hooked = hooked and _hooks_active()
    view = memoryview(data)
    offset = 0
    chunk = _CHUNK if hooked else len(data) or 1
    while offset < len(view):
        written = os.write(fd, view[offset : offset + chunk])
        offset += written
        if hooked:
            boundary()


def boundary() -> None:
    """A write boundary: a no-op unless a test hook is set (see the module docstring)."""
    global _boundaries_passed
    if not _hooks_active():
        return
    _boundaries_passed += 1
    kill_at = _env_number(_KILL_ENV)
    if kill_at and _boundaries_passed >= kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    delay = _env_number(_DELAY_ENV)
    if delay:
        time.sleep(delay)


def _hooks_active() -> bool:
    return bool(os.environ.get(_DELAY_ENV) or os.environ.get(_KILL_ENV))


def _env_number(name: str) -> float:
    raw = os.environ.get(name)
    if not raw:
        return 0.0
    try:
        return max(0.0, float(raw))
    except ValueError:
        return 0.0


def mode_of(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the rename already happened
    finally:
        os.close(fd)
