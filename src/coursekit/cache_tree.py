"""The course tree's digest: every file's content hash and every folder, memoised in a stat table.

The table maps path -> (mtime_ns, ctime_ns, size, inode, dev, sha256), git's index strategy; a
racily clean file (modified within `RACY_NS` of when the table was written) is hashed again.
It holds each folder's stamp too: when every folder still has its stamp (none gained, lost or
renamed an entry) the files are the table's, and a stat of each says which changed, with no
folder listed (from `SPLIT_FROM` files, half of them stat-ed by a forked child); otherwise (or
racily) every folder is listed, as the warm path decides.
Standard library only at module level: the warm path (`coursekit.cache`) imports it.
"""

from __future__ import annotations

import itertools
import marshal
import os
import stat
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from coursekit.cache_files import CACHE_DIR, file_digest, read_records, sha256, write_records
from coursekit.warm import spare_processor

RACY_NS = 2_000_000_000  # two seconds: coarser than any filesystem's timestamp granularity
# The stat table on disk: a stream of records (cache_files.write_records), when it was written
# and then the rows, as dicts of up to `ROWS_PER_RECORD` (path -> row) each: marshal builds a
# dict in C, where a record per row cost a Python loop over ~18,000 of them at 1,000 chapters
# (59 against 23-27 ms to read). Bump the last number when a record's shape changes.
STAT_TABLE = "stat-table.bin"  # in the cache's versioned folder
TABLE_MAGIC = b"coursekit-stat-table\0" + b"3\0"
# A folder's row is keyed by its path and a "/" (the course folder's: "/"), and holds its stamp
# and "" for a digest: a folder whose stamp did not move holds the same entries (adding,
# removing or renaming one moves it), so a tree none of whose folders moved is known from a
# stat of each path it had, with no folder listed.
FOLDER = "/"
ROWS_PER_RECORD = 4096


def read_table(path: Path) -> dict[str, Any] | None:
    """The stat table `TreeDigest.save` wrote at `path`, as `compute` takes it; None for
    anything else (a row of the wrong shape is a changed file: `compute` checks each)."""
    records = read_records(path, TABLE_MAGIC)
    if not records:
        return None
    files: dict[str, Any] = {}
    for record in records[1:]:
        if not isinstance(record, dict):
            return None
        files.update(record)
    return {"written_ns": records[0], "files": files}


def write_table(path: Path, table: dict[str, Any]) -> bool:
    rows = iter(table["files"].items())
    chunks = iter(lambda: dict(itertools.islice(rows, ROWS_PER_RECORD)), {})
    return write_records(path, TABLE_MAGIC, itertools.chain([table["written_ns"]], chunks))


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


# From this many files to stat, a forked child stats the second half while the run stats the
# first (a stat is a system call: ~18,000 files at 1,000 chapters), as the warm path does; a
# fork and its exit cost a few ms.
SPLIT_FROM = 8192


def _worth_a_child(files: int) -> bool:
    """Whether a child is worth its fork: enough files, a second processor, and no thread
    that a fork could find holding a lock (the process is one thread at the lookup)."""
    if files < SPLIT_FROM or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    return spare_processor()


def _compared(
    base: str,
    rows: list[tuple[str, Any]],
    settled: int,
    same: dict[str, list[Any]],
    files: list[tuple[str, os.stat_result]],
) -> bool:
    """Each file's row in `same` when it still holds, else the file and its stat in `files`;
    False when one is no longer a regular file (OSError when one is gone)."""
    lstat = os.lstat
    for key, row in rows:
        st = lstat(f"{base}/{key}")
        if not stat.S_ISREG(st.st_mode):
            return False
        if _holds(row, st, settled):
            same[key] = row  # the same row: a large tree's table is not held twice
        else:
            files.append((key, st))
    return True


def _in_child(base: str, rows: list[tuple[str, Any]], settled: int) -> tuple[int, int] | None:
    """A forked child comparing `rows` (its pid and the pipe it answers on), or None. Its
    answer: the marshal bytes of the keys whose rows no longer hold, or None for anything
    else (a file no longer regular, or gone: then the run compares them itself)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: it writes its answer and exits, flushing nothing of the run's
        status = 1
        try:
            os.close(read_end)
            same: dict[str, list[Any]] = {}
            files: list[tuple[str, os.stat_result]] = []
            regular = _compared(base, rows, settled, same, files)
            answer = marshal.dumps([key for key, _ in files] if regular else None)
            view = memoryview(answer)
            while view:
                view = view[os.write(write_end, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _collected(child: tuple[int, int] | None) -> set[str] | None:
    """The keys the child found moved, or None: no child, or one that failed or answered
    None."""
    if child is None:
        return None
    pid, read_end = child
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        os.close(read_end)
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return None
    if status != 0 or not chunks:
        return None
    try:
        keys = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(keys, list) and all(type(key) is str for key in keys)):
        return None
    return set(keys)


def _holds(row: Any, st: os.stat_result, settled: int) -> TypeGuard[list[Any]]:
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


class TreeDigest:
    """The content hash of every file under the course folder, memoised by stat tuple."""

    def __init__(self, course_dir: Path, table_path: Path) -> None:
        self.course_dir = course_dir
        self.table_path = table_path
        self.files: dict[str, str] = {}  # relative path -> sha256 of its bytes
        self.folders: set[str] = set()  # relative paths: an empty folder matters to the loader
        self.safe = True  # False: the tree holds something the digest cannot vouch for
        self.changed = False  # the stat table needs writing back
        # files whose content is not what the stat table last held -> the digest it held
        # then (None: a file it did not list)
        self.edited: dict[str, str | None] = {}
        self._folder_rows: dict[str, list[Any]] = {}  # folder + "/" -> its stamp and ""
        self._fresh: dict[str, list[Any]] = {}  # file -> its row, as `compute` last saw them
        self._now = 0  # when `compute` began
        # the rows `compute` made (new or changed files, folders listed): a row it kept was
        # settled before the table was written, so only these can be racily clean
        self._made: list[list[Any]] = []

    def compute(self, table: Any = None) -> str | None:
        """The digest of the tree, or None when it holds something the digest cannot vouch for.

        `table` (a stat table as `save` writes it) stands in for the one on disk."""
        if table is None:
            table = read_table(self.table_path)
        written = 0
        known: dict[str, list[Any]] = {}
        if (
            isinstance(table, dict)
            and isinstance(table.get("files"), dict)
            and type(table.get("written_ns")) is int  # a damaged table is no table
        ):
            written = table["written_ns"]
            known = table["files"]
        now = time.time_ns()
        self._made = []
        found = self._from_table(known, written) if known else None
        if found is None:  # the first look, or a folder gone: list every folder
            self.folders.clear()
            self._folder_rows = {}
            fresh: dict[str, list[Any]] = {}
            looked_at: Iterable[tuple[str, os.stat_result]] = self._walk()
        else:
            fresh, looked_at = found
            self.files = {rel: row[5] for rel, row in fresh.items()}
        settled = written - RACY_NS
        for rel, st in looked_at:
            old = known.get(rel)
            if _holds(old, st, settled):
                row = old  # the same row: a large tree's table is not held twice
            else:
                try:
                    row = [*file_stamp(st), file_digest(self.course_dir / rel, st)]
                except OSError:
                    self.safe = False
                    return None
                self.changed = True
                self._made.append(row)
                kept = old[5] if type(old) is list and len(old) == 6 else None
                before = kept if type(kept) is str else None
                if row[5] != before:
                    self.edited[rel] = before
            self.files[rel] = row[5]
            fresh[rel] = row
        if not self.safe:  # the walk stopped early: a link, a device, an unreadable folder
            return None
        folders = self._folder_rows  # (keys ending in "/": none is a file's)
        if len(fresh) + len(folders) != len(known) or not (
            fresh.keys() <= known.keys() and folders.keys() <= known.keys()
        ):
            self.changed = True
        self._fresh = fresh
        self._now = now
        listing = [f"{rel}\0{digest}" for rel, digest in self.files.items()]
        listing += [f"{rel}/\0folder" for rel in self.folders]
        return sha256("\n".join(sorted(listing)))

    def recent(self, now_ns: int) -> bool:
        """Whether a file `compute` saw changed within `RACY_NS` of `now_ns` (just edited)."""
        return any(stamp_is_racy(row, now_ns) for row in self._made)

    def save(self, release: bool = False) -> None:
        """Write the stat table back (only what compute() saw), stamped with when it was read.

        `release`: then let go of the rows (`files` and `folders` stay, and the rows `recent`
        may still find racy): a run that computes its output holds the course meanwhile, and
        at 1,000 chapters the ~28,000 rows were ~10 MB of a cold run's peak."""
        if self.changed and self.safe:
            table = {"written_ns": self._now, "files": self._folder_rows | self._fresh}
            if write_table(self.table_path, table):
                self.changed = False
        if release:  # a row not racy now never will be: `recent` is asked later, not earlier
            self._made = [row for row in self._made if stamp_is_racy(row, self._now)]
            self._fresh = {}
            self._folder_rows = {}

    def _from_table(
        self, known: dict[str, Any], written: int
    ) -> tuple[dict[str, list[Any]], list[tuple[str, os.stat_result]]] | None:
        """The files below the course folder, listing only the folders that moved: the rows
        of the table whose file still has the stamp it had, and the others (new or changed)
        with their stat now. A folder whose stamp did not move holds the entries the table
        holds for it (adding, removing or renaming one moves it), so its files are the
        table's, each stat-ed; a folder that moved (an editor that saves by writing a new
        file and renaming it over the old moves the folder it saves in) is listed, and a
        folder new since the table is walked. None, for every folder to be listed, when a
        folder of the table is gone or no longer a folder, or a file of an unmoved one is no
        longer a regular file. ~Half the time of listing every folder at 1,000 chapters
        (28,000 stats, and not 10,000 folder listings)."""
        if FOLDER not in known:
            return None
        base = str(self.course_dir)
        self._folder_rows = rows = {}
        moved: set[str] = set()
        lstat = os.lstat
        try:
            for key, row in known.items():
                if not key.endswith(FOLDER):
                    continue
                folder = key[:-1]
                st = lstat(f"{base}/{folder}" if folder else base)
                if not stat.S_ISDIR(st.st_mode):
                    return None
                stamp = file_stamp(st)
                if type(row) is list and row == [*stamp, ""] and not stamp_is_racy(stamp, written):
                    rows[key] = row
                else:
                    moved.add(folder)
                if folder:
                    self.folders.add(folder)
            settled = written - RACY_NS  # a stamp from before it proves the file unchanged
            rows_of = [
                (key, row)
                for key, row in known.items()
                if key[-1] != FOLDER and not (moved and key.rpartition("/")[0] in moved)
            ]  # (not a folder, nor a file the listing of its moved folder gives)
            half = len(rows_of) // 2 if _worth_a_child(len(rows_of)) else len(rows_of)
            child = _in_child(base, rows_of[half:], settled) if half < len(rows_of) else None
            same: dict[str, list[Any]] = {}
            files: list[tuple[str, os.stat_result]] = []
            try:
                regular = _compared(base, rows_of[:half], settled, same, files)
            finally:
                changed = _collected(child)
            if not regular:
                return None
            theirs = rows_of[half:]
            if changed is None:  # no child, or it failed: compared here
                regular = _compared(base, theirs, settled, same, files)
            else:  # the rows it found moved are stat-ed again here, the rest hold
                moved_rows = [(key, row) for key, row in theirs if key in changed]
                regular = _compared(base, moved_rows, settled, same, files)
                same.update((key, row) for key, row in theirs if key not in changed)
            if not regular:
                return None
        except OSError:
            return None
        if moved:  # listed again, and walked into where the table held nothing
            relisted = [(f"{f}/" if f else "", f"{base}/{f}" if f else base) for f in moved]
            files += self._listed(relisted, known)
        return (same, files) if self.safe else None

    def _walk(self) -> Iterator[tuple[str, os.stat_result]]:
        """Every file below the course folder, every folder listed."""
        return self._listed([("", str(self.course_dir))])

    def _listed(
        self, stack: list[tuple[str, str]], known: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, os.stat_result]]:
        """Every file in the folders `stack` names ((their path relative to the course folder
        and "/", their path)) and below them, but not in a folder whose row `known` holds (its
        own row says whether it moved). A symbolic link makes the tree unsafe to digest (its
        target may lie anywhere), and so does anything unreadable: the listing then stops
        with `safe` False. The entry's type comes with the listing, so only files are stat-ed,
        and a regular file (most entries) is known after one test."""
        folders = self.folders
        rows = self._folder_rows
        while stack:
            prefix, folder = stack.pop()
            try:
                # stamped before it is listed: an entry added in between moves the stamp after
                # the one kept, so the next look lists the folder again
                rows[prefix or FOLDER] = row = [*file_stamp(os.lstat(folder)), ""]
                self._made.append(row)
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                self.safe = False
                return
            for entry in entries:
                if entry.is_file(follow_symlinks=False):  # a regular file, not a link to one
                    yield prefix + entry.name, entry.stat(follow_symlinks=False)
                elif entry.is_dir(follow_symlinks=False):
                    if not prefix and entry.name == CACHE_DIR:
                        continue  # a course folder that is the project root holds the cache
                    rel = prefix + entry.name
                    folders.add(rel)
                    if known is None or rel + FOLDER not in known:
                        stack.append((rel + "/", entry.path))
                else:
                    self.safe = False  # a link, a fifo, a socket, a device: not a course file
                    return
