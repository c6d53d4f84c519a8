"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half.

The new content goes to a temporary file in the same directory, is flushed and fsynced, then
`os.replace`d over the target; the directory is fsynced so the rename itself survives a crash.
The target's permission bits are kept. Course files are written durably; cache entries skip
the fsyncs (`durable=False`): one lost in a crash is only a miss.

`COURSEKIT_TEST_WRITE_DELAY` (seconds, a float) is a test hook: when set, the writer writes in
small chunks and sleeps between them, so a test can kill the process mid-write.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from pathlib import Path

_DELAY_ENV = "COURSEKIT_TEST_WRITE_DELAY"
_CHUNK = 4096


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace (or create) `path` with `data`, atomically."""
    folder = path.parent
    mode = _mode_of(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_all(handle.fileno(), data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        _fsync_dir(folder)


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` as UTF-8 (newlines kept exactly as given), atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _write_all(fd: int, data: bytes) -> None:
    delay = _test_delay()
    view = memoryview(data)
    offset = 0
    chunk = _CHUNK if delay else len(data) or 1
    while offset < len(view):
        written = os.write(fd, view[offset : offset + chunk])
        offset += written
        if delay:
            time.sleep(delay)


def _test_delay() -> float:
    raw = os.environ.get(_DELAY_ENV)
    if not raw:
        return 0.0
    try:
        return max(0.0, float(raw))
    except ValueError:
        return 0.0


def _mode_of(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
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
