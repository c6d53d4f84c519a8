"""One loader: the course folder in, a located `Course` and the problems met on the way out."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from coursekit import codes
from coursekit.diagnostics import Diagnostic, Severity
from coursekit.load import replay
from coursekit.load.clean import CleanDocuments
from coursekit.load.collecting import long_lived
from coursekit.load.documents import ListedDocuments
from coursekit.load.listing import KnownTree
from coursekit.load.parsecache import keep_parse
from coursekit.load.reader import At, Models, ParsedAnew, Where
from coursekit.model.base import Location
from coursekit.model.deferred import deferred_chapter
from coursekit.model.documents import BookManifest, ChapterManifest, CourseManifest
from coursekit.model.ids import CHAPTER_ID
from coursekit.model.tree import Book, Chapter, Course, ExerciseDoc, Problem
from coursekit.records import record

if TYPE_CHECKING:
    from coursekit.store import ResultStore

MANIFESTS = ("course.yaml", "book.yaml", "chapter.yaml")
NOT_LOADED = {
    codes.YAML_SYNTAX,
    codes.UNREADABLE,
    codes.UNKNOWN_KEY,
    codes.WRONG_TYPE,
    codes.MISSING_KEY,
}


@record
class LoadResult:
    course: Course
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def unloaded_manifests(self) -> list[Diagnostic]:
        """Why a manifest (course.yaml, a book.yaml, a chapter.yaml) did not load: what hides
        everything listed under it from `owed` and `new`, so they point at it."""
        return [
            d
            for d in self.diagnostics
            if d.code in NOT_LOADED and d.path.rsplit("/", 1)[-1] in MANIFESTS
        ]


class _Loader(ListedDocuments):
    """The walk: course.yaml, then each listed book, chapter, lesson, problem and exercise."""

    def load(self) -> Course:
        manifest_path = self.course_dir / "course.yaml"
        self.course.manifest_path = self.rel(manifest_path)
        if not self.exists(manifest_path) and not self.listing.lexists(manifest_path):
            self.report(
                Location(self.course.manifest_path),
                codes.MISSING_FILE,
                "no course.yaml in the course folder",
            )
            return self.course
        manifest = self.document(manifest_path, CourseManifest)
        if manifest is None:
            return self.course
        self.course.manifest = manifest
        for index, book_id in enumerate(manifest.books):
            since, listed_at = len(self.diagnostics), Where(manifest, "books", index)
            if not self.load_book(book_id, listed_at):
                self.unloaded("book", book_id, listed_at, since)
        return self.course

    def load_book(self, book_id: str, listed_at: At) -> bool:
        """Load a listed book and its chapters; False when its manifest did not load."""
        path = self.listed(listed_at, "book", book_id, self.course_dir, book_id, "book.yaml")
        if path is None:
            return False
        book_dir = path.parent
        manifest = self.document(path, BookManifest)
        if manifest is None:
            return False
        book = Book(manifest=manifest, path=self.rel(path), dir=self.rel(book_dir))
        self.course.books.setdefault(book_id, book)
        listed: set[str] = set()
        for index, chapter_id in enumerate(manifest.chapters):
            since, listed_at = len(self.diagnostics), Where(manifest, "chapters", index)
            folder = self.chapter_folder(book_dir, chapter_id, listed_at)
            if folder is not None:
                listed.add(folder.name)
            if folder is None or not self.load_chapter(book_id, folder):
                self.unloaded("chapter", chapter_id, listed_at, since)
        for name in self.listing.entry_names(book_dir):
            if name in listed:
                continue
            folder = book_dir / name
            if folder not in self.claimed and self.exists(folder / "chapter.yaml"):
                self.report(
                    Location(self.rel(folder / "chapter.yaml")),
                    codes.UNLISTED_FILE,
                    f"chapter folder '{name}' is not listed in {self.rel(path)}",
                    Severity.WARNING,
                )
        return True

    def chapter_folder(self, book_dir: Path, chapter_id: str, listed_at: At) -> Path | None:
        match = CHAPTER_ID.match(chapter_id)
        if match is None:
            return None  # the id rule reports the malformed id
        number = match["n"]
        candidates = [
            book_dir / name
            for name in self.listing.subfolders(book_dir)
            if name == number or name.startswith(number + "-")
        ]
        if not candidates:
            self.report(
                listed_at,
                codes.MISSING_FILE,
                f"chapter '{chapter_id}' is listed but there is no folder '{self.rel(book_dir)}/{number}-<slug>'",
            )
            return None
        if len(candidates) > 1:
            self.claimed.update(candidates)
            names = ", ".join(entry.name for entry in candidates)
            self.report(
                listed_at,
                codes.MISSING_FILE,
                f"chapter '{chapter_id}' matches several folders: {names}",
            )
            return None
        if not self.exists(candidates[0] / "chapter.yaml"):
            self.report(
                listed_at,
                codes.MISSING_FILE,
                f"{self.rel(candidates[0])}/chapter.yaml does not exist",
                missing=candidates[0] / "chapter.yaml",
            )
            return None
        return candidates[0]

    def load_svg_figures(self, manifest: ChapterManifest, folder: Path) -> None:
        """An SVG figure's text is read (size-capped, inside the course) for its orders of growth."""
        for figure in manifest.figures:
            asset = os.path.normpath(figure.asset)
            if asset.endswith(".svg") and not asset.startswith(("..", "/")):
                path = folder / asset
                if self.exists(path):
                    self.text(path)

    def load_chapter(self, book_id: str, folder: Path) -> bool:
        """Load a chapter and its documents; False when its chapter.yaml did not load."""
        path, rel = folder / "chapter.yaml", self.rel(folder)
        since, failed = len(self.diagnostics), len(self.course.failed)
        assets = self.listing.files_below(folder, rel)
        clean = self.clean_record(rel)
        key = self.folder_key(folder, rel, assets, clean)
        recorded = None if key is None else replay.recalled(self, rel, key)
        chapter = self.chapter(book_id, path, rel, recorded)
        if chapter is None:
            return False
        if chapter.id in self.course.chapters:
            return True  # the duplicate-id rule reports it from the books' lists
        self.course.chapters[chapter.id] = chapter
        chapter.assets = frozenset(assets)
        if key and recorded and replay.replay(self, chapter, key, recorded, clean):
            clean.save()
            return True
        self.reading = [] if key is not None else None
        try:
            self.walk_chapter(chapter, folder, clean)
        finally:
            read, self.reading = self.reading, None
        clean.save()
        met_nothing = len(self.diagnostics) == since and len(self.course.failed) == failed
        if read is not None and key is not None and met_nothing:
            replay.record(self.store, chapter, key, read, clean, self.course.texts)
        return True

    def chapter(
        self, book_id: str, path: Path, rel: str, recorded: replay.Recorded | None
    ) -> Chapter | None:
        """The chapter of the manifest at `path`: validated when first read where a record of
        its folder's load vouches for it (coursekit.load.replay), now otherwise; None when it
        does not load."""
        if recorded is not None:
            text = self.text(path)
            if text is None:
                return None
            manifest_rel = self.rel(path)
            keep_parse(self.store, text, self.course.digests.get(manifest_rel))
            build = replay.manifest_later(self, text, manifest_rel, rel)
            fields = {"book_id": book_id, "dir": rel, "path": manifest_rel}
            return deferred_chapter(build, recorded.manifest, **fields)
        manifest = self.document(path, ChapterManifest)
        if manifest is None:
            return None
        return Chapter(manifest=manifest, book_id=book_id, dir=rel, path=self.rel(path))

    def walk_chapter(self, chapter: Chapter, folder: Path, clean: CleanDocuments) -> None:
        """Find and load what the chapter's manifest lists, and say what it does not list."""
        manifest, path = chapter.manifest, folder / "chapter.yaml"
        self.load_svg_figures(manifest, folder)
        lessons_dir = folder / "lessons"
        listed_lessons: set[str] = set()
        for index, item in enumerate(manifest.items):
            if item.lesson is None:
                continue
            listed_lessons.add(item.lesson)
            lesson_path = self.listed(
                Where(manifest, "items", index, "lesson"),
                "lesson",
                item.lesson,
                lessons_dir,
                f"{item.lesson}.md",
            )
            if lesson_path is None:
                continue
            lesson = self.load_lesson(lesson_path, item.lesson, manifest.id, clean)
            if lesson is not None:
                chapter.lessons.setdefault(item.lesson, lesson)
        if self.listing.is_dir(lessons_dir):
            for name in self.listing.entry_names(lessons_dir):
                if not fnmatch.fnmatchcase(name, "*.md"):  # what `glob("*.md")` finds
                    continue
                stem = name[:-3] if len(name) > 3 else name  # `Path.stem` (".md" is all stem)
                if stem not in listed_lessons:
                    self.report(
                        Location(self.rel(lessons_dir / name)),
                        codes.UNLISTED_FILE,
                        f"lesson '{stem}' is not listed in {self.rel(path)} items",
                        Severity.WARNING,
                    )
        for index, problem_id in enumerate(manifest.problems):
            problem = self.load_listed(Problem, problem_id, folder, manifest, index, clean)
            if problem is not None:
                chapter.problems.setdefault(problem_id, problem)
        for index, exercise_id in enumerate(manifest.exercises):
            exercise = self.load_listed(ExerciseDoc, exercise_id, folder, manifest, index, clean)
            if exercise is not None:
                chapter.exercises.setdefault(exercise_id, exercise)

    def folder_key(
        self, folder: Path, rel: str, assets: list[str], clean: CleanDocuments
    ) -> replay.Key | None:
        """The key a record of the chapter folder's load is kept under (coursekit.load.replay),
        or None when this load neither records nor replays one."""
        known = self.listing.known(folder)
        if known is None or self.store is None or clean.store is None:
            return None
        return replay.folder_key(known[0], known[1], str(folder), assets, rel)


def load_course(
    course_dir: Path,
    project_root: Path | None = None,
    store: ResultStore | None = None,
    overlays: Mapping[Path, str] | None = None,
    models: Models | None = None,
    parsed_anew: ParsedAnew | None = None,
    tree: KnownTree | None = None,
) -> LoadResult:
    """Load the course under `course_dir`; paths in the result are relative to `project_root`.

    With a `store`, each parsed YAML document is kept there by its content's hash. `overlays`
    (absolute path -> text) are read in place of those files: an editor's unsaved buffers.
    `models` (kept by the caller between loads) serves a document whose text did not change
    without validating it again; afterwards it holds exactly this load's documents.
    `parsed_anew(kind, data)` is told of each document the store did not hold. With a `tree`,
    what the course folder holds and the texts it keeps are taken from it (`KnownTree`)."""
    course_dir = course_dir.absolute()
    root = (project_root or course_dir.parent).absolute()
    loader = _Loader(course_dir, root, store, overlays, models, parsed_anew, tree)
    with long_lived():
        course = loader.load()
    if models is not None:
        models.clear()
        models.update(loader.used)
    return LoadResult(course=course, diagnostics=loader.diagnostics)
