"""What the server knows: the project, the open buffers, and the latest checked course.

No pygls here: this is the engine seen from an editor (the on-disk tree plus every open
buffer), so it can be driven and measured without a client.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.cache_tree import file_stamp, racily_clean
from coursekit.diagnostics import Diagnostic
from coursekit.engine import CheckResult, check
from coursekit.load.reader import Models
from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.options import Options
from coursekit.project import Project
from coursekit.store import MemoryStore, ResultStore

PROGRAMS = "CK9"  # the family that runs worked-problem programs (on save only)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _stamp(path: Path) -> list[int] | None:
    """The file's stamp as the cache's stat table keeps it (`cache_tree.file_stamp`)."""
    st = _stat(path)
    return None if st is None else file_stamp(st)


def key(path: Path | str) -> Path:
    """One spelling per file, whatever the editor sent."""
    return Path(os.path.normpath(os.path.abspath(path)))


@dataclass
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
        self.project = project
        # Verdicts (sympy, programs) are kept across edits: an unchanged claim is not re-run.
        self.store: ResultStore = store if store is not None else MemoryStore()
        self.buffers: dict[Path, str] = {}
        self.snapshot: Snapshot | None = None
        self.published: set[str] = set()  # paths that were last sent non-empty diagnostics
        # Files read by earlier checks, by the stamp the cache's stat table uses (mtime, ctime,
        # size, inode, device): an edit re-reads only what changed on disk (resolving and
        # reading ~1,500 files costs more than the rules).
        self.disk: dict[Path, tuple[list[int], str]] = {}
        # What the programs said at the last save: a keystroke does not run them, and must not
        # make their findings vanish either.
        self.program_findings: list[Diagnostic] = []
        # Validated documents of the last check: an edit validates the edited document only.
        self.models: Models = {}
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
            started = time.time_ns()
            overlays = {**self._unchanged_on_disk(), **self.buffers}
            result = check(
                self.project,
                options=options,
                store=self.store,
                overlays=overlays,
                models=self.models,
            )
            self._remember(result.course, started)
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

    def _unchanged_on_disk(self) -> dict[Path, str]:
        found: dict[Path, str] = {}
        for path, (stamp, text) in self.disk.items():
            if _stamp(path) == stamp:
                found[path] = text
        return found

    def _remember(self, course: Course, started: int) -> None:
        self.disk = {}
        for rel, text in course.texts.items():
            path = self.absolute(rel)
            st = _stat(path)
            # a file written while this check ran, or just before it, may have been read
            # before a write in the same timestamp tick: git's racy-clean rule, as on disk
            if path not in self.buffers and st is not None and not racily_clean(st, started):
                self.disk[path] = (file_stamp(st), text)

    def to_publish(self, snapshot: Snapshot) -> Iterator[tuple[str, list[Diagnostic]]]:
        """Every open file, and every file whose diagnostics are new or now cleared (a fix in
        one file clears findings in the files that depend on it)."""
        now = set(snapshot.by_path)
        open_files = {rel for path in self.buffers if (rel := self.rel(path)) is not None}
        for rel in sorted(now | self.published | open_files):
            yield rel, snapshot.by_path.get(rel, [])
        self.published = now

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
