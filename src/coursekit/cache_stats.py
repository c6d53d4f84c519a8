"""Which files of the stat table still hold: stamps compared, in this process or a forked child.

A row of the stat table (coursekit.cache_tree) holds while its file has the stamp it had when
the table was written (git's index strategy); a folder's row, while the folder gained, lost or
renamed no entry. `survey` compares every row with the tree as it is now. At 1,000 chapters
that is ~28,000 `lstat`s: from `SPLIT_FROM` rows a forked child takes half of them (or, when
the run has other work to do meanwhile, the whole tree digest: `cache_tree.TreeDigest.compute`).

Standard library only at module level: the warm path (`coursekit.cache`) imports it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from coursekit import warm_stamps
from coursekit.forked import collected, in_child
from coursekit.warm_recent import relative
from coursekit.warm_stamps import spare_processor

RACY_NS = 2_000_000_000  # two seconds: coarser than any filesystem's timestamp granularity
# A folder's row is keyed by its path and a "/" (the course folder's: "/"), and holds its stamp
# and "" for a digest: a folder whose stamp did not move holds the same entries (adding,
# removing or renaming one moves it), so a tree none of whose folders moved is known from a
# stat of each path it had, with no folder listed.
FOLDER = "/"
# From this many files to stat, a forked child stats the second half while the run stats the
# first (a stat is a system call: ~18,000 files at 1,000 chapters), as the warm path does; a
# fork and its exit cost a few ms.
SPLIT_FROM = 8192

# What `survey` finds: the folders that moved (their files are listed again, not compared),
# the rows of those that did not (folder + "/" -> row), the file rows that hold (file -> row),
# and the files whose rows do not, with their stat now.
Survey = tuple[
    set[str], dict[str, list[Any]], dict[str, list[Any]], list[tuple[str, os.stat_result]]
]


def file_stamp(st: os.stat_result) -> list[int]:
    """What says a file is unchanged without reading it: its modification and change times,
    size, inode and device. The change time cannot be set from user space, so an edit whose
    mtime is restored afterwards (`touch -d`) still changes the stamp."""
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]


def stamp_is_racy(stamp: Sequence[int], seen_ns: int) -> bool:
    """Whether the file a stamp (`file_stamp`'s: mtime and ctime first) was taken of changed
    so close to `seen_ns` (when it was read, or its stamp taken) that a second edit in the same
    timestamp tick could leave its stamp unchanged: git's racy-clean rule. Such a file is read
    (or hashed) again next time, whatever its stamp."""
    return max(stamp[0], stamp[1]) >= seen_ns - RACY_NS


def worth_a_child(files: int) -> bool:
    """Whether a child is worth its fork: enough files, a second processor, and no thread
    that a fork could find holding a lock (the process is one thread at the lookup)."""
    if files < SPLIT_FROM or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    return spare_processor()


def holds(row: Any, st: os.stat_result, settled: int) -> TypeGuard[list[Any]]:
    """Whether a row of the table still holds for a file stat-ed now: the same stamp, from
    before `settled` (a racily clean stamp proves nothing), beside a digest."""
    return (
        type(row) is list
        and len(row) == 6
        and row[0] == st.st_mtime_ns
        and row[1] == st.st_ctime_ns
        and row[2] == st.st_size
        and row[3] == st.st_ino
        and row[4] == st.st_dev
        and type(row[5]) is str
        and max(row[0], row[1]) < settled
    )


def compared(
    base: str,
    rows: list[tuple[str, Any]],
    settled: int,
    same: dict[str, list[Any]],
    files: list[tuple[str, os.stat_result]],
    split: bool = False,
) -> bool:
    """Each file's row in `same` when it still holds, else the file and its stat in `files`;
    False when one is no longer a regular file (OSError when one is gone). Where the C stamps
    were built, they vouch for the rows first (`_held_in_c`; `split`: half of them taken by a
    second thread), and only the others are stat-ed here."""
    lstat, regular, prefix = os.lstat, stat.S_ISREG, near(base) + "/"
    if warm_stamps.native_stamps is not None:
        paths = [prefix + key for key, _ in rows]
        doubtful = _held_in_c(paths, rows, settled, split, regular, same)
        if doubtful is None:
            return False
        rows = doubtful
    for key, row in rows:
        st = lstat(prefix + key)
        if not regular(st.st_mode):
            return False
        if holds(row, st, settled):
            same[key] = row  # the same row: a large tree's table is not held twice
        else:
            files.append((key, st))
    return True


STAMP = len(warm_stamps.ABSENT)  # six integers a path, mode first (`warm_stamps.stamps`)


def _held_in_c(
    paths: list[str],
    rows: list[tuple[str, Any]],
    settled: int,
    split: bool,
    kind: Callable[[int], bool],
    held: dict[str, list[Any]],
) -> list[tuple[str, Any]] | None:
    """The (key, row) pairs the C stamps of their paths do not vouch for; those they do go in
    `held` (`holds`, against a slice of the stamps; `split`: half taken by a second thread):
    ~1.3 us a path, against ~2.5 us for an `os.lstat` and its result's attributes. The rest
    are stat-ed again in Python, which has the last word (an inode number past 2**63 is two's
    complement here). A folder's row (`kind` S_ISDIR) holds no digest. None when a path is no
    longer of its `kind`; FileNotFoundError when one is gone, as `os.lstat` says it; OSError
    when one cannot be stat-ed; ValueError when one holds a NUL (a forged table), as there."""
    now = warm_stamps.taken(os.fsencode("\0".join(paths)), len(paths), split)
    folders = kind is stat.S_ISDIR
    doubtful: list[tuple[str, Any]] = []
    for at, (key, row) in zip(range(0, len(now), STAMP), rows, strict=True):
        mode = now[at]
        if not kind(mode):
            if mode == 0:
                path = paths[at // STAMP]
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            return None
        if (
            type(row) is list
            and len(row) == 6
            and row[:5] == now[at + 1 : at + STAMP]
            and type(row[5]) is str
            and max(row[0], row[1]) < settled
            and (row[5] == "" or not folders)
        ):
            held[key] = row
        else:
            doubtful.append((key, row))
    return doubtful


def near(base: str) -> str:
    """`base` (an absolute path) relative to the working directory when it lies below it: an
    `lstat` of a path walks each of its folders, and four fewer of them were ~12% of the time
    of 28,000 stats at 1,000 chapters. (Nothing here changes the working directory; a process
    that did, between this and the stats, would find paths gone: a miss, never a wrong hit.)"""
    try:
        cwd = os.getcwd()
    except OSError:  # (the working directory was removed)
        return base
    return os.fsdecode(relative(os.fsencode(base), os.fsencode(cwd)))  # (the warm record's rule)


def folder_rows(
    base: str, known: dict[str, Any], written: int, split: bool = False
) -> tuple[set[str], dict[str, list[Any]]] | None:
    """The folders of the table whose stamp moved (or is racy), and the rows of those whose
    stamp did not, each folder stat-ed once; None when one is gone or no longer a folder
    (OSError when one cannot be stat-ed). `split`: with the stamps taken in C, a second thread
    may take half (not where the caller says the other processor is busy: `survey`)."""
    moved: set[str] = set()
    kept: dict[str, list[Any]] = {}
    lstat, is_dir, top = os.lstat, stat.S_ISDIR, near(base)
    prefix, settled = top + "/", written - RACY_NS
    folders = [(key, row) for key, row in known.items() if key[-1:] == FOLDER]
    if warm_stamps.native_stamps is not None:
        paths = [prefix + key[:-1] if key != FOLDER else top for key, _ in folders]
        threads = split and warm_stamps.worth_splitting(len(paths))
        doubtful = _held_in_c(paths, folders, settled, threads, is_dir, kept)
        if doubtful is None:
            return None
        folders = doubtful
    for key, row in folders:
        folder = key[:-1]
        st = lstat(prefix + folder if folder else top)
        if not is_dir(st.st_mode):
            return None
        if holds(row, st, settled) and row[5] == "":  # (a folder's row holds no digest)
            kept[key] = row
        else:
            moved.add(folder)
    return moved, kept


def file_rows(known: dict[str, Any], moved: set[str]) -> list[tuple[str, Any]]:
    """The table's file rows, but not those of the moved folders (listing them gives them)."""
    return [
        (key, row)
        for key, row in known.items()
        if key[-1] != FOLDER and not (moved and key.rpartition("/")[0] in moved)
    ]


def survey(base: str, known: dict[str, Any], written: int, split: bool = True) -> Survey | None:
    """Every row of the table compared with the tree below `base` (`split`: from `SPLIT_FROM`
    files, half of them by a forked child); None when a folder is gone or no longer a folder,
    or a file of an unmoved one is no longer a regular file (OSError when one is gone)."""
    folders = folder_rows(base, known, written, split)
    if folders is None:
        return None
    moved, kept = folders
    settled = written - RACY_NS  # a stamp from before it proves the file unchanged
    rows = file_rows(known, moved)
    same: dict[str, list[Any]] = {}
    files: list[tuple[str, os.stat_result]] = []
    if warm_stamps.native_stamps is not None:  # (a second thread, not a child: `_held_in_c`)
        regular = compared(
            base, rows, settled, same, files, split and warm_stamps.worth_splitting(len(rows))
        )
        return (moved, kept, same, files) if regular else None
    half = len(rows) // 2 if split and worth_a_child(len(rows)) else len(rows)
    theirs = rows[half:]
    child = in_child(lambda: _changed_keys(base, theirs, settled)) if theirs else None
    try:
        regular = compared(base, rows[:half], settled, same, files)
    finally:
        changed = _keys(collected(child))
    if not regular:
        return None
    if changed is None:  # no child, or it failed: compared here
        regular = compared(base, theirs, settled, same, files)
    else:  # the rows it found changed are stat-ed again here, the rest hold
        regular = compared(base, [(k, r) for k, r in theirs if k in changed], settled, same, files)
        same.update((key, row) for key, row in theirs if key not in changed)
    return (moved, kept, same, files) if regular else None


def _changed_keys(base: str, rows: list[tuple[str, Any]], settled: int) -> list[str] | None:
    """(In a child.) The keys of `rows` that no longer hold; None when one is not regular."""
    files: list[tuple[str, os.stat_result]] = []
    return [key for key, _ in files] if compared(base, rows, settled, {}, files) else None


def _keys(answer: Any) -> set[str] | None:
    if isinstance(answer, list) and all(type(key) is str for key in answer):
        return set(answer)
    return None
