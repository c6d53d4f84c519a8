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

import contextlib
import heapq
import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from coursekit import cache_stats, forked, framed, warm_recent
from coursekit.cache_files import (
    CACHE_DIR,
    _with_entry,
    atomic_write,
    file_digest,
    read_records,
    sha256,
    write_records,
)
from coursekit.cache_stats import (
    FOLDER,
    file_stamp,
    holds,
    stamp_is_racy,
    survey,
)

# The stat table on disk: a stream of records (cache_files.write_records), when it was written
# and then the rows, as dicts of up to `ROWS_PER_RECORD` (path -> row) each: marshal builds a
# dict in C, where a record per row cost a Python loop over ~18,000 of them at 1,000 chapters
# (59 against 23-27 ms to read). Bump the last number when a record's shape changes.
STAT_TABLE = "stat-table.bin"  # in the cache's versioned folder
TABLE_MAGIC = b"coursekit-stat-table\0" + b"3\0"
ROWS_PER_RECORD = 4096
# Each write of the table also names its most recently changed paths, with their stamps, in
# `warm_recent.NAME` beside it: an author's next edit is likeliest among them, and a change
# there, seen in a few stats, says a lookup will miss (the warm path's, and `compute`'s).
RECENT = 64
# About what a row of the table takes on disk (151 bytes at 1,000 chapters): the table's size
# over it guesses its rows, to decide whether a child is worth its fork without reading it.
ROW_BYTES = 150


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


def table_head(path: Path) -> tuple[int, int] | None:
    """When the stat table at `path` says it was written, and its size in bytes, from its first
    record alone (`framed.first_int`: not checked, a guess that reading the whole confirms);
    None for no table, or a file that does not begin as one."""

    def head(handle: BinaryIO, size: int) -> tuple[int, int] | None:
        written = framed.first_int(handle.read(len(TABLE_MAGIC) + 4 + 16), TABLE_MAGIC)
        return None if written is None else (written, size)

    return _with_entry(path, head)


def write_table(path: Path, table: dict[str, Any]) -> bool:
    rows = iter(table["files"].items())
    chunks = iter(lambda: dict(itertools.islice(rows, ROWS_PER_RECORD)), {})
    return write_records(path, TABLE_MAGIC, itertools.chain([table["written_ns"]], chunks))


def _rows(table: Any) -> tuple[dict[str, Any], int]:
    """The rows of a stat table as `read_table` gives it and when it was written; ({}, 0) for
    no table or a damaged one."""
    if (
        isinstance(table, dict)
        and isinstance(table.get("files"), dict)
        and type(table.get("written_ns")) is int
    ):
        return table["files"], table["written_ns"]
    return {}, 0


class TreeDigest:
    """The content hash of every file under the course folder, memoised by stat tuple."""

    def __init__(self, course_dir: Path, table_path: Path) -> None:
        self.course_dir = course_dir
        self.table_path = table_path
        self.files: dict[str, str] = {}  # relative path -> sha256 of its bytes
        self.folders: set[str] = set()  # relative paths: an empty folder matters to the loader
        # the folders sorted, when the child that took the digest sent them so (`SeenTree`)
        self.folders_in_order: list[str] | None = None
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
        self._writer: int | None = None  # a forked child writing the table back

    def compute(
        self,
        table: Any = None,
        meanwhile: Callable[[], object] | None = None,
        changed_ns: int | None = None,
    ) -> str | None:
        """The digest of the tree, or None when it holds something the digest cannot vouch for.

        `table` (a stat table as `save` writes it) stands in for the one on disk. `meanwhile`
        is work the caller would do after a miss, done while a forked child reads the table,
        computes the digest and writes the table back (`_computed_for_parent`), when the
        caller knows of a change newer than the table (`changed_ns`: the newest stamp among
        the files the warm path found changed; without one, the table's `RECENT` most recently
        changed paths are stat-ed for one, as `warm_recent` keeps them): a miss is then all
        but certain. From `SPLIT_FROM` rows, with a processor to spare; otherwise (and with
        no such change known: the lookup may well hit, and a hit would wait for the child's
        whole digest) nothing is done ahead, and the caller does that work itself if it
        needs it. Whether to send the work ahead is decided from the table's first record and
        size (`table_head`): reading the whole table was ~15 ms at 1,000 chapters of the path
        this process waits on, with the child's own stats done in ~0.1 s of its ~0.15 s."""
        if meanwhile is not None and self._ahead(table, changed_ns):
            child = forked.in_child(
                lambda: self._computed_for_parent(table),
                lambda: self.save(release=True),
                large=True,
            )
            if child is not None:
                try:
                    meanwhile()
                except BaseException:
                    forked.discard(child)
                    raise
                # the answer, taken while the child writes the table back (`save` waits)
                self._writer = child[0]
                answer = forked.collected(child, reap=False)
                if self._adopted(answer):
                    digest: str | None = answer[0]
                    return digest
                self._wait_for_writer()
        known, written = _rows(read_table(self.table_path) if table is None else table)
        return self._computed(known, written, split=True)

    def _ahead(self, table: Any, changed_ns: int | None) -> bool:
        """Whether to send the digest ahead to a child (`compute`)."""
        if table is None:
            head = table_head(self.table_path)
            if head is None:
                return False
            written, rows = head[0], head[1] // ROW_BYTES
        else:
            known, written = _rows(table)
            rows = len(known)
        if not rows or not cache_stats.worth_a_child(rows):
            return False
        if changed_ns is None:  # no record of the warm path's: the table's recent paths
            changed_ns = self._recent_change(written)
        return changed_ns is not None and changed_ns >= written

    def _recent_change(self, written: int) -> int | None:
        """When the table's recent paths last changed, if one did since this very table was
        written (`warm_recent.change_since`; None: none did, or the file is another write's)."""

        def read(handle: BinaryIO, size: int) -> tuple[bytes, int] | None:
            if size > warm_recent.MAX_BYTES:  # (the warm path's limit too)
                return None
            return handle.read(), os.fstat(handle.fileno()).st_mtime_ns

        found = _with_entry(self.table_path.with_name(warm_recent.NAME), read)
        if found is None:
            return None
        return warm_recent.change_since(found[0], found[1], written)

    def _write_recent(self, rows: dict[str, list[Any]]) -> None:
        """The table's `RECENT` most recently changed paths and their stamps (`warm_recent`)."""
        newest = heapq.nlargest(RECENT, ((max(row[0], row[1]), rel) for rel, row in rows.items()))
        base = os.fsencode(self.course_dir)
        entries = [
            (
                base if rel == FOLDER else base + b"/" + os.fsencode(rel.removesuffix("/")),
                rows[rel][:5],
            )
            for _, rel in newest
        ]
        with contextlib.suppress(OSError, ValueError):
            atomic_write(
                self.table_path.with_name(warm_recent.NAME), warm_recent.encode(self._now, entries)
            )

    def _computed_for_parent(self, table: Any) -> list[Any]:
        """(In the child.) The table read (`table`, if given, stands in for it), the digest,
        and what the parent keeps of the run: every file's digest and every folder, whole
        (~2.8 MB of marshal at 1,000 chapters, ~4 ms for the parent to read: the parent then
        reads no table); the parent takes it while the child writes the table back. Both in
        path order: the parent's load bisects them sorted (`SeenTree`), and sorting 28,000
        paths took it ~7 ms, sorting them once sorted a pass."""
        known, written = _rows(read_table(self.table_path) if table is None else table)
        digest = self._computed(known, written, split=False)  # (the parent holds the other core)
        racy = [row for row in self._made if stamp_is_racy(row, self._now)]
        files = dict(sorted(self.files.items()))
        return [digest, files, sorted(self.folders), self.edited, racy, self.safe]

    def _adopted(self, answer: Any) -> bool:
        """Take what the child computed (`_computed_for_parent`); False when it did not answer
        that. The child writes the table back, or fails to: either way this process holds no
        rows to write (a later `save` writes nothing, once the child is done)."""
        if not (type(answer) is list and len(answer) == 6):
            return False
        digest, files, folders, edited, made, safe = answer
        if not (
            (digest is None or type(digest) is str)
            and type(files) is dict
            and type(folders) is list
            and type(edited) is dict
            and type(made) is list
            and type(safe) is bool
        ):
            return False
        self.files, self.folders, self.folders_in_order = files, set(folders), folders
        self.edited, self._made, self.safe, self.changed = edited, made, safe, False
        return True

    def _wait_for_writer(self) -> None:
        """Wait for the child writing the table (if one is), and forget it."""
        if self._writer is not None:
            forked.reaped(self._writer)
            self._writer = None

    def _computed(self, known: dict[str, Any], written: int, split: bool) -> str | None:
        """`compute` in this process (`split`: a child may take half the stats)."""
        now = time.time_ns()
        self._made = []
        self.folders_in_order = None
        found = self._from_table(known, written, split) if known else None
        if found is None:  # the first look, or a folder gone: list every folder
            self.folders.clear()
            self._folder_rows = {}
            fresh: dict[str, list[Any]] = {}
            looked_at: Iterable[tuple[str, os.stat_result]] = self._walk()
        else:
            fresh, looked_at = found
            self.files = {rel: row[5] for rel, row in fresh.items()}
        settled = written - cache_stats.RACY_NS  # (read here: tests shut the window)
        for rel, st in looked_at:
            old = known.get(rel)
            if holds(old, st, settled):
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
        at 1,000 chapters the ~28,000 rows were ~10 MB of a cold run's peak. A child writing
        the table (`compute`) is waited for (its table written whole before this returns),
        but not by a `release`: this process holds no rows then, and the run goes on while
        the child writes (~20 ms at 1,000 chapters; it takes the answer's ~2.8 MB first);
        the run's record (`save` again) waits for it."""
        if not (release and self._writer is not None):
            self._wait_for_writer()
        if self.changed and self.safe:
            rows = self._folder_rows | self._fresh
            if write_table(self.table_path, {"written_ns": self._now, "files": rows}):
                self.changed = False
                self._write_recent(rows)
        if release:  # a row not racy now never will be: `recent` is asked later, not earlier
            self._made = [row for row in self._made if stamp_is_racy(row, self._now)]
            self._fresh = {}
            self._folder_rows = {}

    def _from_table(
        self, known: dict[str, Any], written: int, split: bool
    ) -> tuple[dict[str, list[Any]], list[tuple[str, os.stat_result]]] | None:
        """The files below the course folder, listing only the folders that moved: the rows
        of the table whose file still has the stamp it had, and the others (new or changed)
        with their stat now (`cache_stats.survey`; `split`: a child may take half). A folder whose
        stamp did not move holds the entries the table holds for it (adding, removing or
        renaming one moves it), so its files are the table's, each stat-ed; a folder that
        moved (an editor that saves by writing a new file and renaming it over the old moves
        the folder it saves in) is listed, and a folder new since the table is walked. None,
        for every folder to be listed, when a folder of the table is gone or no longer a
        folder, or a file of an unmoved one is no longer a regular file. ~Half the time of
        listing every folder at 1,000 chapters (28,000 stats, and not 10,000 folder
        listings)."""
        if FOLDER not in known:
            return None
        base = str(self.course_dir)
        try:
            surveyed = survey(base, known, written, split)
        except (OSError, ValueError):  # (ValueError: a path holding a NUL, a forged table)
            return None
        if surveyed is None:
            return None
        moved, self._folder_rows, same, files = surveyed
        self.folders.update(key[:-1] for key in self._folder_rows if key != FOLDER)
        self.folders.update(folder for folder in moved if folder)
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
