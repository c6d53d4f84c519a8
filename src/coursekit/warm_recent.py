"""The course's most recently changed paths and their stamps, kept beside the stat table: where
an author's next edit likely lands, for the warm path to look first.

A miss writes no warm record (recording one after every edit would cost a stat of every path
and a record of the whole output), so the record's own "most recently changed" part grows
stale while an author edits one lesson again and again: each run then compared ~14,000 stamps
of a 1,000-chapter course's record before finding the edit (~35 ms). Every write of the stat
table (`cache_tree.TreeDigest.save`) writes this file too: when the table's look began, and
its `RECENT` most recently changed paths with their stamps as that look saw them.

`change_since` is the warm path's first look, and the whole-run lookup's when there is no
warm record: when the file was written after the record was (the table it was written with,
for the lookup), a path whose stamp is no longer the file's changed since too (a change time
only moves forward), so the record cannot hold; it returns the newest change time among such
paths that the record watches. Anything unexpected is None (no change known), and the record
is compared as before: this file can only make a run miss sooner, never replay one.

Standard library only, and only modules the warm path has loaded (os, `sealed`).
"""

from __future__ import annotations

import os

from coursekit.sealed import seal, unseal

NAME = "recent.bin"  # in the cache's versioned folder, beside the stat table
MAGIC = b"coursekit-recent\0" + b"1\0"
MAX_BYTES = 1 << 20

Entry = tuple[bytes, list[int]]  # a path and its stamp: mtime, ctime, size, inode, device


def encode(written_ns: int, entries: list[Entry]) -> bytes:
    return seal(MAGIC, (written_ns, entries))


def decode(data: bytes) -> tuple[int, list[Entry]] | None:
    """What `encode` wrote, or None for anything else."""
    sealed = unseal(MAGIC, data)
    if not (isinstance(sealed, tuple) and len(sealed) == 2):
        return None
    written_ns, entries = sealed
    if type(written_ns) is not int or not isinstance(entries, list):
        return None
    for entry in entries:
        if not (
            isinstance(entry, tuple)
            and len(entry) == 2
            and type(entry[0]) is bytes
            and isinstance(entry[1], list)
            and len(entry[1]) == 5
            and all(type(value) is int for value in entry[1])
        ):
            return None
    return written_ns, entries


def change_since(
    data: bytes,
    file_ns: int,
    since_ns: int,
    watched: list[bytes] | None = None,
    cwd: bytes | None = None,
) -> int | None:
    """The newest modification or change time among the file's paths that changed since it
    was written and that `watched` (NUL-joined paths; None: any) holds, when its look began
    at or after `since_ns` (a path gone: now); None when none did, or it cannot say.
    (`file_ns`: when the file itself was written, which its look cannot follow. `cwd`: the
    working directory, when `watched` holds paths below it relative to it, as a warm record
    does: `warm.below_cwd`.)"""
    read = decode(data)
    if read is None or read[0] < since_ns or read[0] > file_ns:
        return None
    newest: int | None = None
    for path, stamp in read[1]:
        try:
            st = os.lstat(path)
            now = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]
        except OSError:
            now = []
        if now == stamp or not (watched is None or _watched(watched, path, cwd)):
            continue
        when = max(now[0], now[1]) if now else _now()
        newest = when if newest is None else max(newest, when)
    return newest


def _watched(watched: list[bytes], path: bytes, cwd: bytes | None) -> bool:
    named = path if cwd is None else relative(path, cwd)
    return any(_holds(joined, named) for joined in watched)


def relative(path: bytes, cwd: bytes) -> bytes:
    """`path` relative to the working directory `cwd` when it lies below it (the folder
    itself: "."), else as it is. A warm record lists its paths so (`warm.below_cwd`): it is
    only read from the very folder it was written in (its key material holds it), where a
    relative path names the same file, and an `lstat` of it walks fewer folders (~12% of the
    stats' time at 1,000 chapters, for a course four folders deep)."""
    if path == cwd:
        return b"."
    prefix = cwd if cwd.endswith(b"/") else cwd + b"/"
    return path[len(prefix) :] or b"." if path.startswith(prefix) else path


def _holds(joined: bytes, path: bytes) -> bool:
    """Whether the NUL-joined paths hold `path` (no path holds a NUL), without a copy of them
    (a part of a 1,000-chapter record is ~1 MB, asked once per changed path)."""
    return (
        b"\0" + path + b"\0" in joined
        or joined.startswith(path + b"\0")
        or joined.endswith(b"\0" + path)
        or joined == path
    )


def _now() -> int:
    import time  # (a path gone since: rare)

    return time.time_ns()
