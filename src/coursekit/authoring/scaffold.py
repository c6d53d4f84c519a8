"""`coursekit new`: allocate the next id, write files that pass `check`, register them.

Every function here plans; nothing writes. The plan is a `Changeset` of new files plus the
parent manifest, edited through `YamlEditor` so that only the registering lines change. The ids
and placeholder sentences come from `naming`.
"""

from __future__ import annotations

import os
from pathlib import Path

from coursekit import codes
from coursekit.authoring.changes import ChangeError, Changeset
from coursekit.authoring.naming import (
    _AREA,
    _SLUG,
    ScaffoldError,
    _plain_title,
    next_apparatus_id,
    next_book_id,
    next_chapter_number,
    slugify,
    thesis_placeholder,
)
from coursekit.authoring.yamledit import EditError, YamlEditor, render_scalar
from coursekit.bounds import UnusableName, child
from coursekit.load import LoadResult
from coursekit.model.tree import Chapter, Course
from coursekit.records import record

__all__ = ["STUB_LINE", "STUB_NOTE", "ScaffoldError", "Scaffolder"]

BROKEN = {codes.YAML_SYNTAX, codes.UNREADABLE}
# What `new` writes is a placeholder: owed, not written, until the author removes the marker.
STUB_NOTE = "Remove `status: stub` once it is written: until then it counts as owed."
STUB_LINE = f"status: stub  # {STUB_NOTE}\n"


# The plan -----------------------------------------------------------------------------------


@record
class Scaffolder:
    root: Path  # the project root
    course_dir: Path
    loaded: LoadResult

    def __post_init__(self) -> None:
        self.changes = Changeset(self.root)
        self.created: list[str] = []  # ids, for the summary

    @property
    def course(self) -> Course:
        return self.loaded.course

    # Helpers -------------------------------------------------------------------------------

    def _abs(self, rel: str) -> Path:
        return (self.root / rel).absolute()

    def _path(self, folder: Path, *names: str) -> Path:
        """`folder / names...`, refused (exit 2) when a name cannot be a file name."""
        try:
            return child(folder, *names)
        except UnusableName as exc:
            raise ScaffoldError(f"{exc}; pass a shorter --id or --title") from None

    def _broken(self, rel: str) -> bool:
        return any(d.path == rel and d.code in BROKEN for d in self.loaded.diagnostics)

    def _edit(self, rel: str) -> tuple[Path, str, YamlEditor]:
        if self._broken(rel):
            raise ScaffoldError(f"{rel} has YAML errors; fix them first (it is never rewritten)")
        path = self._abs(rel)
        planned = self.changes.current(path)
        original = self.course.texts.get(rel)
        if original is None:
            try:
                original = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ScaffoldError(f"{rel}: cannot read it: {exc}") from None
        try:
            return path, original, YamlEditor(planned if planned is not None else original, rel)
        except EditError as exc:
            raise ScaffoldError(str(exc)) from None

    def _register(self, rel: str, key: str, value: object, index: int | None = None) -> None:
        path, original, editor = self._edit(rel)
        try:
            if index is None:
                editor.append((key,), value)
            else:
                editor.insert((key,), index, value)
        except EditError as exc:
            raise ScaffoldError(str(exc)) from None
        self.changes.update(path, original, editor.text)

    def _create(self, path: Path, text: str) -> None:
        try:
            self.changes.create(path, text)
        except ChangeError as exc:
            raise ScaffoldError(str(exc)) from None

    def _modeline(self, path: Path, schema: str) -> str:
        target = self.root / "schemas" / f"{schema}.schema.json"
        relative = Path(os.path.relpath(target, path.parent)).as_posix()
        return f"# yaml-language-server: $schema={relative}\n"

    def _chapter(self, chapter_id: str) -> Chapter:
        chapter = self.course.chapters.get(chapter_id)
        if chapter is None:
            known = ", ".join(sorted(self.course.chapters)) or "none"
            raise ScaffoldError(f"no chapter '{chapter_id}' in the course (known: {known})")
        if self._broken(chapter.path):
            raise ScaffoldError(f"{chapter.path} has YAML errors; fix them first")
        return chapter

    def _slug(self, title: str, given: str | None) -> str:
        slug = given if given is not None else slugify(title)
        if not _SLUG.match(slug):
            raise ScaffoldError(
                f"'{slug}' is not a usable id (lowercase letters, digits and single hyphens); "
                "pass --id"
            )
        return slug

    # Book ----------------------------------------------------------------------------------

    def new_book(self, title: str, summary: str | None = None) -> str:
        manifest = self.course.manifest
        if manifest is None:
            raise ScaffoldError(f"{self.course.manifest_path or 'course.yaml'} did not load")
        book_id = next_book_id(manifest.books)
        path = self._path(self.course_dir, book_id, "book.yaml")
        text = (
            self._modeline(path, "book")
            + f"id: {render_scalar(book_id)}\n"
            + f"title: {render_scalar(title)}\n"
            + f"summary: {render_scalar(summary or f'The chapters of {_plain_title(title)}, in reading order.')}\n"
            + "chapters: []\n"
        )
        self._create(path, text)
        self._register(self.course.manifest_path, "books", book_id)
        self.created.append(f"book {book_id}")
        return book_id

    # Chapter -------------------------------------------------------------------------------

    def new_chapter(
        self, book_id: str, title: str, authors: list[str], slug: str | None = None
    ) -> str:
        book = self.course.books.get(book_id)
        if book is None:
            raise ScaffoldError(f"no book '{book_id}' in the course")
        if book_id == "0":
            raise ScaffoldError("Book 0 holds the apparatus; use `coursekit new apparatus`")
        manifest = self.course.manifest
        if manifest is None or not manifest.maturity:
            raise ScaffoldError("the course defines no maturity ladder")
        book_dir = self._abs(book.dir)
        folders = [p.name for p in book_dir.iterdir() if p.is_dir()] if book_dir.is_dir() else []
        number = next_chapter_number(book_id, book.manifest.chapters, folders)
        chapter_id = f"{book_id}.{number}"
        folder = self._path(book_dir, f"{number}-{self._slug(title, slug)}")
        path = folder / "chapter.yaml"
        thesis = thesis_placeholder(title)
        name = _plain_title(title)
        lines = [
            self._modeline(path, "chapter").rstrip("\n"),
            f"id: {chapter_id}",
            f"title: {render_scalar(title)}",
            f"authors: [{', '.join(render_scalar(a, flow=True) for a in authors)}]",
            f"thesis: {render_scalar(thesis)}",
            f"dek: {render_scalar(f'A one-line summary of {name} follows once the chapter is drafted.')}",
            f"problem: {render_scalar(f'The problem that opens {name} is described here once the chapter is drafted.')}",
            f"maturity: {render_scalar(manifest.maturity[0].id)}",
            "status: draft",
            "apparatus: []",
            "notation: []",
            "propositions:",
            "  - number: 1",
            f"    claim: {render_scalar(thesis)}",
            f"    gloss: {render_scalar(f'Why the central claim of {name} holds is set out here once the chapter is drafted.')}",
            "figures: []",
            "items: []",
            "problems: []",
            "exercises: []",
        ]
        self._create(path, "\n".join(lines) + "\n")
        self._register(book.path, "chapters", chapter_id)
        self.created.append(f"chapter {chapter_id}")
        return chapter_id

    # Lesson --------------------------------------------------------------------------------

    def new_lesson(
        self,
        chapter_id: str,
        title: str | None,
        strand: str | None,
        reading_time: int = 10,
        slug: str | None = None,
    ) -> str:
        chapter = self._chapter(chapter_id)
        manifest = chapter.manifest
        planned_index = None
        if slug is not None:
            for index, item in enumerate(manifest.items):
                if item.planned == slug:
                    planned_index = index
                    title = title or item.title
                    if strand is not None and item.strand is not None and strand != item.strand:
                        # Changing a plan is an edit of chapter.yaml, never a side effect.
                        raise ScaffoldError(
                            f"'{slug}' is planned in {chapter_id} as a {item.strand} lesson, not "
                            f"{strand}; drop --strand to keep the plan's, or change the plan "
                            f"in {chapter.path} first"
                        )
                    strand = item.strand or strand
        if title is None:
            raise ScaffoldError("a lesson needs --title (or --id of a planned item)")
        lesson_id = self._slug(title, slug)
        if planned_index is None and any(item.id == lesson_id for item in manifest.items):
            if any(item.planned == lesson_id for item in manifest.items):
                raise ScaffoldError(
                    f"'{lesson_id}' is already a planned item of {chapter_id}; write it with "
                    f"`coursekit new lesson --chapter {chapter_id} --id {lesson_id}`"
                )
            raise ScaffoldError(f"'{lesson_id}' is already an item of {chapter_id}")
        strands = [s.id for s in self.course.manifest.strands] if self.course.manifest else []
        if strand is None:
            raise ScaffoldError(f"a lesson needs --strand ({', '.join(strands)})")
        if strands and strand not in strands:
            raise ScaffoldError(f"unknown strand '{strand}' (known: {', '.join(strands)})")
        path = self._path(self._abs(chapter.dir), "lessons", f"{lesson_id}.md")
        body = (
            "This lesson is a draft. Its text is written here, and its formulas, claims, quiz "
            "and further reading are declared in the front matter above as they are added. "
            f"{STUB_NOTE}\n"
        )
        text = (
            "---\n"
            f"title: {render_scalar(title)}\n"
            f"strand: {render_scalar(strand)}\n"
            f"reading_time: {int(reading_time)}\n"
            "status: stub\n"
            "---\n\n" + body
        )
        self._create(path, text)
        if planned_index is None:
            self._register(chapter.path, "items", {"lesson": lesson_id})
        else:
            self._replace_planned(chapter.path, planned_index, lesson_id)
        self.created.append(f"lesson {chapter_id}/{lesson_id}")
        return lesson_id

    def _replace_planned(self, rel: str, index: int, lesson_id: str) -> None:
        path, original, editor = self._edit(rel)
        try:
            editor.replace_item(("items",), index, {"lesson": lesson_id})
        except EditError as exc:
            raise ScaffoldError(str(exc)) from None
        self.changes.update(path, original, editor.text)

    # Problem and exercise ------------------------------------------------------------------

    def new_problem(
        self, chapter_id: str, title: str, variant: str | None = None, slug: str | None = None
    ) -> str:
        chapter = self._chapter(chapter_id)
        problem_id = self._slug(title, slug)
        if problem_id in chapter.manifest.problems:
            raise ScaffoldError(f"problem '{problem_id}' is already listed in {chapter_id}")
        folder = self._path(self._abs(chapter.dir), "problems", problem_id, "problem.yaml").parent
        name = _plain_title(title)
        text = (
            self._modeline(folder / "problem.yaml", "problem") + f"title: {render_scalar(title)}\n"
            f"variant: {render_scalar(variant or problem_id)}\n"
            f"statement: {render_scalar(f'The statement of {name} is written here; the program and the published solution below must then be updated to match it.')}\n"
            "program: solution.py\n"
            "solution:\n"
            "  value: 0\n"
            "  rtol: 0\n"
            "  atol: 0\n"
            "supports: []\n"
            f"{STUB_LINE}"
        )
        self._create(folder / "problem.yaml", text)
        self._create(folder / "solution.py", _solution_program(title))
        self._register(chapter.path, "problems", problem_id)
        self.created.append(f"problem {chapter_id}/{problem_id}")
        return problem_id

    def new_exercise(
        self, chapter_id: str, title: str, program: bool = False, slug: str | None = None
    ) -> str:
        chapter = self._chapter(chapter_id)
        exercise_id = self._slug(title, slug)
        if exercise_id in chapter.manifest.exercises:
            raise ScaffoldError(f"exercise '{exercise_id}' is already listed in {chapter_id}")
        folder = self._path(
            self._abs(chapter.dir), "exercises", exercise_id, "exercise.yaml"
        ).parent
        name = _plain_title(title)
        statement = f"The statement of {name} is written here."
        modeline = self._modeline(folder / "exercise.yaml", "exercise")
        if program:
            text = (
                modeline + f"title: {render_scalar(title)}\n"
                f"statement: {render_scalar(statement)}\n"
                "program: solution.py\n"
                "solution:\n"
                "  value: 0\n"
                "  rtol: 0\n"
                "  atol: 0\n"
                f"{STUB_LINE}"
            )
            self._create(folder / "solution.py", _solution_program(title))
        else:
            answer = f"The worked answer to {name} is written here."
            text = (
                modeline + f"title: {render_scalar(title)}\n"
                f"statement: {render_scalar(statement)}\n"
                "solution:\n"
                f"  text: {render_scalar(answer)}\n"
                f"{STUB_LINE}"
            )
        self._create(folder / "exercise.yaml", text)
        self._register(chapter.path, "exercises", exercise_id)
        self.created.append(f"exercise {chapter_id}/{exercise_id}")
        return exercise_id

    # Apparatus -----------------------------------------------------------------------------

    def new_apparatus(
        self, area: str, title: str, status: str = "planned", summary: str | None = None
    ) -> str:
        book = self.course.books.get("0")
        if book is None:
            raise ScaffoldError("the course has no Book 0 to hold the apparatus")
        area = area.upper()
        if not _AREA.match(area):
            raise ScaffoldError(f"area '{area}' must be 2 to 4 capital letters")
        if book.manifest.areas and area not in book.manifest.areas:
            known = ", ".join(book.manifest.areas)
            raise ScaffoldError(
                f"Book 0 declares no area '{area}' (known: {known}); add it to `areas` first"
            )
        entries = book.manifest.apparatus
        entry_id = next_apparatus_id(area, [e.id for e in entries])
        same = [i for i, e in enumerate(entries) if e.area == area]
        index = same[-1] + 1 if same else len(entries)
        entry = {
            "id": entry_id,
            "title": title,
            "status": status,
            "summary": summary
            or f"What {_plain_title(title)} covers is summarised here in a sentence or two.",
        }
        self._register(book.path, "apparatus", entry, index=index)
        self.created.append(f"apparatus entry {entry_id}")
        return entry_id


def _solution_program(title: str) -> str:
    title = title.replace("\\", "\\\\").replace('"', '\\"')  # a docstring that compiles
    return (
        f'"""Solution program for: {title}.\n\n'
        "coursekit runs `solve()` in an isolated process and compares what it returns with the\n"
        "published solution in the manifest beside this file. Replace the placeholder below\n"
        'with the computation, and the published value with its result."""\n\n\n'
        "def solve() -> int:\n"
        "    return 0\n"
    )
