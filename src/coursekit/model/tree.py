"""The loaded course: documents tied together, as rules see it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import TypeVar, cast

from coursekit.model.base import Location
from coursekit.model.documents import (
    ApparatusEntry,
    BookManifest,
    ChapterManifest,
    CourseManifest,
    Exercise,
    LessonFrontMatter,
    WorkedProblem,
)
from coursekit.records import record

T = TypeVar("T")


@record(slots=True)
class Lesson:
    """A written item: front matter plus Markdown body."""

    id: str
    chapter_id: str
    path: str
    meta: LessonFrontMatter
    text: str  # the whole file
    body_start: int  # where the body starts in `text`
    body_line: int  # 1-based line of the body's first line in the file

    @property
    def body(self) -> str:
        """The Markdown body: cut from the file's text when asked. A run reads the bodies of
        the chapters it re-checks, and a copy of every body held from the load was 15 MB at
        1,000 chapters."""
        return self.text[self.body_start :]

    @property
    def ref(self) -> str:
        return f"{self.chapter_id}/{self.id}"

    def body_loc(self, offset: int) -> Location:
        """Location of a character offset into the body."""
        before = self.text[self.body_start : self.body_start + offset]
        line = before.count("\n")
        column = offset - (before.rfind("\n") + 1) + 1
        return Location(self.path, self.body_line + line, column)


@record(slots=True)
class Program:
    """A solution program beside its manifest (`source` None when the file is missing)."""

    path: str
    source: str | None


@record(slots=True)
class Problem:
    id: str
    chapter_id: str
    path: str
    meta: WorkedProblem
    program: Program


@record(slots=True)
class ExerciseDoc:
    id: str
    chapter_id: str
    path: str
    meta: Exercise
    program: Program | None


@record(slots=True)
class Chapter:
    manifest: ChapterManifest
    book_id: str
    dir: str  # project-relative folder
    path: str  # project-relative chapter.yaml
    lessons: dict[str, Lesson] = field(default_factory=dict)
    problems: dict[str, Problem] = field(default_factory=dict)
    exercises: dict[str, ExerciseDoc] = field(default_factory=dict)
    assets: frozenset[str] = frozenset()  # project-relative paths of files that exist

    @property
    def id(self) -> str:
        return self.manifest.id


@record(slots=True)
class Book:
    manifest: BookManifest
    path: str
    dir: str

    @property
    def id(self) -> str:
        return self.manifest.id


@record(frozen=True, slots=True)
class LoadFailure:
    """One reason a document did not load (its diagnostic's place, code and message)."""

    location: Location
    code: str
    message: str

    def __str__(self) -> str:
        where = self.location
        return f"{where.path}:{where.line}:{where.column}: {self.code} {self.message}"


@record(frozen=True, slots=True)
class Unloaded:
    """A book or chapter the course lists that did not load, so no rule and no count sees it."""

    kind: str  # "book" | "chapter"
    id: str  # as it is listed
    failures: tuple[LoadFailure, ...]


@record(slots=True)
class Course:
    """Everything the loader could read. Rules take what is there; absent parts are None/empty."""

    root: str  # project-relative course folder, e.g. "course"
    manifest: CourseManifest | None = None
    manifest_path: str = ""
    books: dict[str, Book] = field(default_factory=dict)
    chapters: dict[str, Chapter] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # path -> text, for carets and hashing
    # path -> the SHA-256 (hex) of its text's UTF-8, where the run's known tree vouches for it
    # (the digest it took of those bytes): what a per-chapter key hashes, already hashed
    digests: dict[str, str] = field(default_factory=dict)
    # path -> its text, where the load knows that very text holds no suppression directive (a
    # replayed chapter's, by its record): coursekit.suppress does not scan those
    plain: dict[str, str] = field(default_factory=dict)
    # What did not load: every document that failed (with why), and the listed books and
    # chapters that are absent because of it (by id), so reports can say so instead of omitting.
    failed: list[LoadFailure] = field(default_factory=list)
    unloaded: dict[tuple[str, str], Unloaded] = field(default_factory=dict)
    # Views that several rules derive from the same documents (a chapter's texts, a lesson's
    # verified maths), computed once per run by whichever rule asks first: see `derive`.
    derived: dict[object, object] = field(default_factory=dict)
    # What rules worked out from one chapter's documents (and course-wide facts), by chapter:
    # see `derive_of`. Not carried to a course made from this one (`dataclasses.replace`).
    of_chapter: dict[str, dict[object, object]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def apparatus(self) -> dict[str, ApparatusEntry]:
        entries: dict[str, ApparatusEntry] = {}
        for book in self.books.values():
            for entry in book.manifest.apparatus:
                entries.setdefault(entry.id, entry)
        return entries

    def derive(self, key: object, compute: Callable[[], T]) -> T:
        """`compute()` once per run under `key`; later callers get the same value."""
        if key not in self.derived:
            self.derived[key] = compute()
        return cast(T, self.derived[key])

    def derive_of(self, chapter_id: str, key: object, compute: Callable[[], T]) -> T:
        """`derive` for a view of one chapter: let go of with the chapter (`let_go`)."""
        held = self.of_chapter.setdefault(chapter_id, {})
        if key not in held:
            held[key] = compute()
        return cast(T, held[key])

    def derived_of(self, chapter_id: str, key: object) -> object | None:
        """What `derive_of` holds for the chapter under `key`, or None."""
        held = self.of_chapter.get(chapter_id)
        return None if held is None else held.get(key)

    def let_go(self, chapter_ids: Iterable[str]) -> None:
        """Forget what was derived of these chapters: a run that checks a large course in
        batches of chapters (coursekit.incremental) holds one batch's views at a time. What
        is asked for again is worked out again."""
        for chapter_id in chapter_ids:
            self.of_chapter.pop(chapter_id, None)

    def lesson(self, ref: str) -> Lesson | None:
        chapter_id, _, lesson_id = ref.partition("/")
        chapter = self.chapters.get(chapter_id)
        return chapter.lessons.get(lesson_id) if chapter else None
