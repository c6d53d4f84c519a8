"""The cache folder on disk: where it is, that it is reached without a symbolic link, and how an
entry is hashed, read and written (atomically; an unreadable entry is a miss).

Standard library only at module level: the warm path (`coursekit.cache`) imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from coursekit import framed
from coursekit.bounds import MAX_FILE_BYTES

CACHE_DIR = ".coursekit_cache"
FORMAT = "v1"  # bump when the layout or any entry's shape changes
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # a cache entry larger than this is not ours: a miss
CHUNK = 1024 * 1024  # bytes hashed at a time
MAP_FROM = 1024 * 1024  # a file of records this large is mapped into memory, not read
T = TypeVar("T")

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by coursekit.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


# The cache folder -------------------------------------------------------------------------------


def cache_root(project_root: Path) -> Path:
    return project_root / CACHE_DIR


def _prepare(root: Path) -> Path:
    """Create the cache folder with its .gitignore and CACHEDIR.TAG; the versioned subfolder."""
    base = root / FORMAT
    if not inside_cache(base / "entry"):
        raise OSError(f"{root} is (or holds) a symbolic link; the cache is not used")
    if not base.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        _write_if_missing(root / ".gitignore", "# Created by coursekit automatically.\n*\n")
        _write_if_missing(root / "CACHEDIR.TAG", CACHEDIR_TAG)
    return base


def _write_if_missing(path: Path, text: str) -> None:
    if not path.exists():
        atomic_write(path, text.encode("utf-8"))


def clean(project_root: Path) -> bool:
    """Remove the cache folder; False when there was none. Refuses a folder that is not ours."""
    root = cache_root(project_root)
    if not root.exists():
        return False
    if root.is_symlink() or not (root / "CACHEDIR.TAG").is_file():
        raise OSError(f"{root} has no CACHEDIR.TAG; not removing a folder coursekit did not make")
    import shutil

    shutil.rmtree(root)
    return True


def inside_cache(path: Path) -> bool:
    """Whether `path` lies in a cache folder reached without a symbolic link on the way.

    The folder is the nearest ancestor named `.coursekit_cache`; it, every folder below it down
    to `path`, and `path` itself must be what they seem (a link there could point anywhere).
    """
    folder = next((p for p in path.parents if p.name == CACHE_DIR), None)
    if folder is None or os.path.islink(path):
        return False
    expected = os.path.join(
        os.path.realpath(folder.parent), os.path.relpath(path.parent, folder.parent)
    )
    return os.path.realpath(path.parent) == os.path.normpath(expected)


def atomic_write(path: Path, data: bytes | Iterable[bytes]) -> None:
    """A cache entry (its bytes, or chunks of them never held together), written whole or not
    at all (not fsynced: a lost entry is a miss)."""
    from coursekit.atomic import atomic_write_chunks  # only writers pay for tempfile

    if not inside_cache(path):
        raise OSError(f"{path}: the cache folder is reached through a symbolic link; not written")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_chunks(path, (data,) if isinstance(data, bytes) else data)


def _with_entry(path: Path, use: Callable[[BinaryIO, int], T]) -> T | None:
    """What `use` makes of a cache file (open for reading, and its size), or None: reached
    through a link, larger than an entry of ours, or unreadable (an OSError or ValueError)."""
    try:
        if not inside_cache(path):
            return None
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            return None if size > MAX_ENTRY_BYTES else use(handle, size)
    except (OSError, ValueError):
        return None


def _read_json(path: Path) -> Any | None:
    data = _with_entry(path, lambda handle, _size: handle.read())
    try:
        return None if data is None else json.loads(data)
    except (ValueError, RecursionError):
        return None


def file_digest(path: Path, st: os.stat_result) -> str:
    """A file's key in the tree digest: its SHA-256 read in chunks, or, for a file larger than
    the loader reads, its stat tuple (what coursekit reports of it, its size, is in there)."""
    if st.st_size > MAX_FILE_BYTES:
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev)
        return "stat:" + ":".join(map(str, stamp))
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True)


def _write_json(path: Path, value: Any) -> bool:
    """Write `value` as JSON (an entry, a run's output); False when it could not be."""
    try:
        atomic_write(path, _ENCODER.encode(value).encode("utf-8"))
    except (OSError, TypeError, ValueError, RecursionError):
        return False
    return True


# The cache's two large files (the pack, the stat table) -----------------------------------------
#
# Written as framed marshal records (`coursekit.framed`) rather than JSON: at 1,000 chapters
# JSON took ~0.3 s to write the 21 MB pack and ~0.3 s to read it on every edit; as records
# ~0.04 s and ~0.12 s. A truncated or damaged file, or another format's, is a miss.


def write_records(path: Path, magic: bytes, records: Iterable[Any]) -> bool:
    """Write `records` (marshal values) after `magic`; False when they could not be written
    (an unwritable cache, a value marshal cannot hold)."""
    try:
        atomic_write(path, framed.chunks(magic, records))
    except (OSError, ValueError, TypeError, OverflowError, RecursionError):
        return False
    return True


def read_records(path: Path, magic: bytes) -> list[Any] | None:
    """The records `write_records` wrote after `magic`, or None for anything else."""
    read = read_records_named(path, magic)
    return None if read is None else read[0]


def read_records_named(path: Path, magic: bytes) -> tuple[list[Any], str] | None:
    """`read_records`, and a name of what was read: its checksum and size (what another file
    written beside it names it by)."""

    def records(handle: BinaryIO, size: int) -> tuple[list[Any], str] | None:
        if size < MAP_FROM or os.name != "posix":
            return framed.records(handle.read(), magic)
        import mmap

        # Mapped, not read: reading copied the 47 MB pack of a 1,000-chapter course into new
        # memory (~45 ms of each edit's run); its pages are mapped at once instead
        # (MAP_POPULATE, where there is one). The cache is only ever replaced whole
        # (`atomic_write`), so the mapped file is never cut short under the run; one emptied
        # since its size was read is refused by `mmap` (ValueError: a miss).
        flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
        with mmap.mmap(handle.fileno(), 0, flags=flags, prot=mmap.PROT_READ) as mapped:
            return framed.records(mapped, magic)

    return _with_entry(path, records)


def sha256(data: bytes | str) -> str:
    if isinstance(data, str):  # a file name that is not UTF-8 holds lone surrogates
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()
