"""A course kept loaded between `check` runs (the daemon's): an edit costs what it touches.

A fresh `check` of a 1,000-chapter course pays, whatever changed, for its imports (~0.4 s), a
stat of every file (~0.3 s) and building every chapter's model from the cache (~2 s). Kept in
one process, none of that repeats:

* an inotify watch of the course folder (`coursekit.watch`, made before the first load) says
  which files changed since the last run, so nothing is stat-ed;
* when nothing changed, the last run's output is the answer (unless something in it depended
  on the clock: `ResultStore.decline`, as the whole-run cache has it);
* when only lessons that loaded cleanly changed, they are patched into the last load
  (`coursekit.lsp.patch`, the language server's keystroke path), and the rules re-run where
  they land (`coursekit.incremental`); so is one book manifest that still lists the same
  chapters (a Book 0 title renamed re-runs the chapters that link it);
* anything else (a manifest, a file added or removed, a lesson that now fails to load) loads
  the course again, reading from disk only the files that changed and validating only those;
* verdicts, parsed documents and per-chapter results stay in one store over the cache's pack,
  and one sympy server stays up between runs.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from coursekit import memo
from coursekit.cache import DiskStore, Layered
from coursekit.cache_pack import TEXTS, PackedStore
from coursekit.commands import check as check_command
from coursekit.load import LoadResult, load_course
from coursekit.load.parsecache import NAMESPACE as PARSED
from coursekit.load.reader import Models
from coursekit.load.yamlsafe import LoadError, read_text
from coursekit.lsp.patch import patched, patched_book, tree_entries
from coursekit.options import Options
from coursekit.project import Project
from coursekit.verify.server import SympyServer
from coursekit.watch import TreeWatch


class ResidentCourse:
    """The course of one project, loaded once and kept up to date (`run` is the `check`)."""

    def __init__(self, project: Project) -> None:
        memo.remember()  # every run checks this course again
        # one spelling, the watch's and the loader's (`--course ../x/course` has a `..` in it)
        self.course_dir = Path(os.path.normpath(project.course_dir.absolute()))
        self.root = Path(os.path.normpath(project.root.absolute()))
        # Before anything is read: a write during the first load is then among the changes.
        self.watch = TreeWatch(self.course_dir)
        self.present = {entry.path for entry in tree_entries(self.course_dir)}
        self._disk = DiskStore(self.root)
        self.store = Layered(PackedStore(self._disk))
        # The course's texts as the last run read them, kept in the pack for a fresh run's
        # load: this one reads the files itself (once), so they would only be held twice.
        self.store.forget(TEXTS)
        self.sympy = SympyServer()
        self.models: Models = {}
        self.loaded: LoadResult | None = None
        self.kept: tuple[str, int] | None = None  # the last output and code, when replayable
        self.loads = 0  # whole loads (the first, and each edit that is not one lesson's)
        self.patches = 0  # edits patched into the last load
        self._lessons: tuple[LoadResult | None, set[str]] = (None, set())

    def close(self) -> None:
        self.watch.close()
        self.sympy.close()

    def run(
        self,
        project: Project,
        paths: Sequence[Path],
        output_format: str,
        out: TextIO,
        color: bool,
        options: Options,
    ) -> int:
        """`check`'s answer (as `commands.check.run` gives it) for the course as it is now."""
        changes = self.watch.changes()
        if changes is None:  # the watch lost track: start again from the disk
            self.watch.close()
            self.watch = TreeWatch(self.course_dir)
            self.present = {entry.path for entry in tree_entries(self.course_dir)}
        else:
            changes = self._settled(changes)
        if changes == set() and self.kept is not None:
            out.write(self.kept[0])
            return self.kept[1]
        loaded = self._refresh(changes)
        if options.formulas:
            if self.sympy.failed:  # a server that failed once is not asked again: a new one
                self.sympy = SympyServer()
            options = replace(options, sympy=self.sympy)
        declined = len(self._disk.declined)
        buffer = io.StringIO()
        code = check_command.run(
            project, paths, output_format, buffer, color, options, self.store, loaded=loaded
        )
        output = buffer.getvalue()
        out.write(output)
        settled = code in (0, 1) and len(self._disk.declined) == declined
        self.kept = (output, code) if settled else None
        return code

    def _settled(self, changes: set[str]) -> set[str]:
        """The changes that matter: not a file that came and went between two runs (an
        editor's or `sed -i`'s temporary file, renamed over the file it saved)."""
        kept: set[str] = set()
        for path in changes:
            try:
                os.lstat(path)
            except OSError:
                if path in self.present:
                    self.present.discard(path)
                    kept.add(path)
                continue
            self.present.add(path)
            kept.add(path)
        return kept

    def _refresh(self, changes: set[str] | None) -> LoadResult:
        """The course as the disk holds it now, given what changed since the last load."""
        if self.loaded is not None and changes == set():
            return self.loaded  # (the last output was not kept: it depended on the clock)
        if self.loaded is not None and changes is not None:
            quick = self._patched(changes)
            if quick is not None:
                self.patches += 1
                if self._lessons[0] is self.loaded:  # a patch keeps every lesson's path
                    self._lessons = (quick, self._lessons[1])
                self._drop()  # (the new course carries what it keeps of the derived facts)
                self.loaded = quick
                return quick
        keep: dict[Path, str] = {}
        if self.loaded is not None and changes is not None:
            for rel, text in self.loaded.course.texts.items():
                path = self.root / rel
                if str(path) not in changes:
                    keep[path] = text
        self.loads += 1
        self._drop()
        self.loaded = load_course(self.course_dir, self.root, self.store, keep, self.models)
        # The parsed YAML it read: a document whose text is unchanged is served validated from
        # `models`, a changed one is parsed anew, so no later load reads them.
        self.store.forget(PARSED)
        return self.loaded

    def _drop(self) -> None:
        """Let the last course go now. What rules derived from it refers back to it (a cycle
        the collector would free only at its next full collection, which a load defers), so
        that goes first; the texts and validated documents the next load reuses are held
        elsewhere."""
        if self.loaded is not None:
            self.loaded.course.derived.clear()
            self.loaded.course.of_chapter.clear()
            self.loaded = None

    def _patched(self, changes: set[str]) -> LoadResult | None:
        """The last load with the changed lessons re-read, when every change is a lesson it
        loaded (`patched` declines a lesson that had or now has a diagnostic), or with one
        book manifest re-read (`patched_book`: a Book 0 title renamed)."""
        assert self.loaded is not None
        lessons = changes <= self._lesson_paths(self.loaded)
        if not changes or not (lessons or len(changes) == 1):
            return None
        texts: dict[Path, str] = {}
        for path in changes:
            try:  # as the loader reads it; what it must report on, a load reports
                texts[Path(path)] = read_text(Path(path), self.course_dir)
            except (LoadError, OSError):
                return None
        if lessons:
            return patched(self.loaded, texts, self.course_dir, self.root, self.models)
        ((book, text),) = texts.items()
        return patched_book(self.loaded, book, text, self.course_dir, self.root, self.models)

    def _lesson_paths(self, loaded: LoadResult) -> set[str]:
        """The absolute paths of the loaded course's lessons (worked out once per course)."""
        if self._lessons[0] is not loaded:
            root = str(self.root)
            paths = {
                os.path.join(root, lesson.path)
                for chapter in loaded.course.chapters.values()
                for lesson in chapter.lessons.values()
            }
            self._lessons = (loaded, paths)
        return self._lessons[1]
