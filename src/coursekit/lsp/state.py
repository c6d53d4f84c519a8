"""What the server knows: the project, the open buffers, and the latest checked course.

No pygls here: this is the engine seen from an editor (the on-disk tree plus every open
buffer), so it can be driven and measured without a client.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

from coursekit import memo
from coursekit.cache import Layered
from coursekit.cache_stats import stamp_is_racy
from coursekit.diagnostics import Diagnostic
from coursekit.engine import CheckResult, check_loaded
from coursekit.load import LoadResult, load_course
from coursekit.load.reader import Models
from coursekit.lsp.patch import Stamp, disk_table, patched
from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.options import Options
from coursekit.project import Project
from coursekit.records import record
from coursekit.rules import Context
from coursekit.store import MemoryStore, ResultStore
from coursekit.watch import TreeWatch, WatchUnavailable

PROGRAMS = "CK9"  # the family that runs worked-problem programs (on save only)


def key(path: Path | str) -> Path:
    """One spelling per file, whatever the editor sent."""
    return Path(os.path.normpath(os.path.abspath(path)))


@record
class Snapshot:
    """One checked state of the course: what hover, definition and completion read."""

    result: CheckResult
    # project-relative path -> diagnostics there (every file that has any)
    by_path: dict[str, list[Diagnostic]] = field(default_factory=dict)

    @property
    def course(self) -> Course:
        return self.result.course


class CourseState:
    """The project, its open buffers and the latest snapshot (thread-safe: runs in a worker)."""

    def __init__(self, project: Project, store: ResultStore | None = None) -> None:
        memo.remember()  # every edit checks this course again
        self.project = project
        # Verdicts (sympy, programs) are kept across edits: an unchanged claim is not re-run.
        self.store: ResultStore = store if store is not None else MemoryStore()
        self.buffers: dict[Path, str] = {}
        self.snapshot: Snapshot | None = None
        # what was last sent for each file that had diagnostics (absent: sent none, or [])
        self.published: dict[str, list[Diagnostic]] = {}
        # Files read by earlier checks, by the stamp the cache's stat table uses (mtime, ctime,
        # size, inode, device): an edit re-reads only what changed on disk (resolving and
        # reading ~1,500 files costs more than the rules).
        self.disk: dict[Path, tuple[Stamp, str]] = {}
        # What the programs said at the last save: a keystroke does not run them, and must not
        # make their findings vanish either.
        self.program_findings: list[Diagnostic] = []
        # Validated documents of the last check: an edit validates the edited document only.
        self.models: Models = {}
        # The last load, what the disk held then and the buffers it read: a keystroke in a
        # lesson patches that one lesson into it (coursekit.lsp.patch) instead of loading again.
        self.loaded: LoadResult | None = None
        self.loaded_table: dict[str, Stamp] = {}
        self.loaded_buffers: dict[Path, str] = {}
        # What changed on disk since the last load, without a stat of every file (~0.3 s a
        # keystroke at 1,000 chapters): made before the first load reads anything. None where
        # inotify cannot watch the course; the table is then taken every time.
        self.watch = _watch(project.course_dir)
        self._lock = threading.Lock()

    # Buffers -------------------------------------------------------------------------------

    def open(self, path: Path | str, text: str) -> None:
        self.buffers[key(path)] = text

    def close(self, path: Path | str) -> None:
        self.buffers.pop(key(path), None)

    def rel(self, path: Path | str) -> str | None:
        """The project-relative path diagnostics use, or None outside the project."""
        try:
            return key(path).relative_to(key(self.project.root)).as_posix()
        except ValueError:
            return None

    def absolute(self, rel: str) -> Path:
        return key(self.project.root / rel)

    def in_course(self, path: Path | str) -> bool:
        return key(path).is_relative_to(key(self.project.course_dir))

    def text(self, rel: str) -> str | None:
        """The buffer's text if open, else what the last check read, else the file."""
        buffer = self.buffers.get(self.absolute(rel))
        if buffer is not None:
            return buffer
        if self.snapshot is not None and rel in self.snapshot.course.texts:
            return self.snapshot.course.texts[rel]
        try:
            return self.absolute(rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    # Checking ------------------------------------------------------------------------------

    def analyse(self, run_programs: bool = False, formulas: bool = True) -> Snapshot:
        """Check the whole course as the editor sees it (disk plus open buffers)."""
        options = Options(exec=run_programs, formulas=formulas, jobs=os.cpu_count() or 1)
        with self._lock:
            loaded = self._load()
            ctx = Context(loaded.course, self.project.config, Layered(self.store), options)
            result = check_loaded(self.project, loaded, ctx)
            found = list(result.diagnostics)
            if run_programs:
                self.program_findings = [d for d in found if d.code.startswith(PROGRAMS)]
            else:
                found = sorted(set(found) | set(self.program_findings))
            by_path: dict[str, list[Diagnostic]] = {}
            for diagnostic in found:
                by_path.setdefault(diagnostic.path, []).append(diagnostic)
            snapshot = Snapshot(result, by_path)
            self.snapshot = snapshot
            return snapshot

    def _load(self) -> LoadResult:
        """The course as the editor sees it: the last load with the edited lessons patched in
        when nothing else changed, else loaded again (reading only what changed on disk)."""
        buffers = dict(self.buffers)  # the editor may send an edit while this check runs
        table = self._disk_table()
        quick = self._patched(table, buffers)
        if quick is None:
            started = time.time_ns()
            overlays = {**self._unchanged_on_disk(table), **buffers}
            root, course_dir = self.project.root, self.project.course_dir
            quick = load_course(course_dir, root, Layered(self.store), overlays, self.models)
            self._remember(quick.course, table, buffers, started)
        self.loaded, self.loaded_table, self.loaded_buffers = quick, table, buffers
        return quick

    def _disk_table(self) -> dict[str, Stamp]:
        """The course's stat table: the last load's when the watch saw nothing change since."""
        if self.watch is not None and self.loaded is not None:
            changes = self.watch.changes()
            if changes == set():
                return self.loaded_table
            if changes is None:  # it lost track: a new watch, before the table is taken
                self.watch.close()
                self.watch = _watch(self.project.course_dir)
        return disk_table(key(self.project.course_dir))

    def _patched(self, table: dict[str, Stamp], buffers: dict[Path, str]) -> LoadResult | None:
        """The last load with the changed buffers patched in, when the disk and the set of
        open buffers are as they were then."""
        if self.loaded is None or table != self.loaded_table:
            return None
        if buffers.keys() != self.loaded_buffers.keys():
            return None
        changed = {p: t for p, t in buffers.items() if self.loaded_buffers[p] != t}
        root, course_dir = self.project.root, self.project.course_dir
        return patched(self.loaded, changed, course_dir, root, self.models)

    def _unchanged_on_disk(self, table: dict[str, Stamp]) -> dict[Path, str]:
        found: dict[Path, str] = {}
        for path, (stamp, text) in self.disk.items():
            if table.get(str(path)) == stamp:
                found[path] = text
        return found

    def _remember(
        self, course: Course, table: dict[str, Stamp], buffers: dict[Path, str], started: int
    ) -> None:
        """What each file read held, under its stamp from before the load (a file written
        since differs from it, and is read again next time)."""
        self.disk = {}
        for rel, text in course.texts.items():
            path = self.absolute(rel)
            stamp = table.get(str(path))
            # a file written while this check ran, or just before it, may have been read
            # before a write in the same timestamp tick: git's racy-clean rule, as on disk
            if path not in buffers and stamp is not None and not stamp_is_racy(stamp, started):
                self.disk[path] = (stamp, text)

    def to_publish(self, snapshot: Snapshot) -> Iterator[tuple[str, list[Diagnostic]]]:
        """Every open file, then every other file whose diagnostics differ from what was last
        sent for it (new, changed or now cleared: a fix in one file clears findings in the
        files that depend on it); the others' are still what the editor shows."""
        open_files = sorted({rel for path in self.buffers if (rel := self.rel(path)) is not None})
        for rel in open_files:
            yield rel, snapshot.by_path.get(rel, [])
        shown = set(open_files)
        for rel in sorted((snapshot.by_path.keys() | self.published.keys()) - shown):
            found = snapshot.by_path.get(rel, [])
            if self.published.get(rel, []) != found:
                yield rel, found
        self.published = {rel: found for rel, found in snapshot.by_path.items()}

    # Where things are ----------------------------------------------------------------------

    def chapter_of(self, rel: str) -> Chapter | None:
        """The chapter a file belongs to (its folder), in the latest snapshot."""
        if self.snapshot is None:
            return None
        for chapter in self.snapshot.course.chapters.values():
            if rel == chapter.path or rel.startswith(chapter.dir + "/"):
                return chapter
        return None

    def lesson_of(self, rel: str) -> Lesson | None:
        chapter = self.chapter_of(rel)
        if chapter is None:
            return None
        return next((lesson for lesson in chapter.lessons.values() if lesson.path == rel), None)


def _watch(course_dir: Path) -> TreeWatch | None:
    try:
        return TreeWatch(key(course_dir))
    except WatchUnavailable:
        return None
