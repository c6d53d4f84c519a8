"""What a chapter lists, loaded: its lessons, problems and exercises, and their programs.

A document the clean record vouches for (`coursekit.load.clean`) is built with its `meta`
validated when a rule first reads it; any other is parsed and validated here. A listed id
that cannot name a file, or names one that is not there, is reported where it is listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from coursekit import codes
from coursekit.bounds import UnusableName, child, shorten
from coursekit.load.clean import CleanDocuments
from coursekit.load.reader import At, DocumentReader, Where
from coursekit.load.yamlsafe import split_front_matter
from coursekit.model.base import Location
from coursekit.model.deferred import built
from coursekit.model.documents import ChapterManifest, Exercise, LessonFrontMatter, WorkedProblem
from coursekit.model.tree import ExerciseDoc, Lesson, Problem, Program

P = TypeVar("P", Problem, ExerciseDoc)  # what a chapter lists beside a program


class ListedDocuments(DocumentReader):
    """The documents a manifest lists, read through the loader's `DocumentReader`."""

    def listed(
        self, listed_at: At, what: str, item_id: str, folder: Path, *names: str
    ) -> Path | None:
        """The file that a listed id names, or None once the reason it cannot be read is told."""
        try:
            path = child(folder, *names)
        except UnusableName as exc:
            self.report(
                listed_at,
                codes.MISSING_FILE,
                f"{what} '{shorten(item_id)}' cannot name a file: "
                + ("it" if exc.name == item_id else f"'{shorten(exc.name)}'")
                + f" {exc.reason}",
            )
            return None
        if not self.exists(path):
            missing = f"is listed but {self.rel(path)} does not exist"
            if what == "program":
                missing = f"does not exist beside {self.rel(folder)}"
            self.report(
                listed_at, codes.MISSING_FILE, f"{what} '{item_id}' {missing}", missing=path
            )
            return None
        return path

    def load_lesson(
        self, path: Path, lesson_id: str, chapter_id: str, clean: CleanDocuments
    ) -> Lesson | None:
        text = self.text(path)
        if text is None:
            return None
        rel = self.rel(path)
        digest, kept = clean.look(rel, text)
        if kept is not None and len(kept) == 2 and all(type(n) is int for n in kept):
            clean.clean(rel, digest, kept)
            return self.vouched_lesson(clean, text, rel, lesson_id, chapter_id, kept)
        parts = split_front_matter(text)
        if parts is None:
            self.report(
                Location(rel),
                codes.MISSING_KEY,
                "a lesson starts with YAML front matter between two '---' lines",
            )
            self.failed(self.diagnostics[-1:])
            return None
        front, body, body_line = parts
        meta = self.parse(front, rel, LessonFrontMatter, line_offset=1)
        if meta is None:
            return None
        clean.clean(rel, digest, [len(text) - len(body), body_line])
        return Lesson(
            id=lesson_id,
            chapter_id=chapter_id,
            path=rel,
            meta=meta,
            text=text,
            body_start=len(text) - len(body),
            body_line=body_line,
        )

    def load_listed(
        self,
        eager: type[P],
        item_id: str,
        folder: Path,
        chapter: ChapterManifest,
        index: int,
        clean: CleanDocuments,
    ) -> P | None:
        """A problem or an exercise the chapter lists (`eager`: its class), with its program.
        Where the clean record vouches for its text and the program it names is there, its
        `meta` is validated when first read."""
        kind: type[WorkedProblem | Exercise] = WorkedProblem if eager is Problem else Exercise
        what = "problem" if eager is Problem else "exercise"
        listed_at = Where(chapter, f"{what}s", index)
        path = self.listed(listed_at, what, item_id, folder / f"{what}s", item_id, f"{what}.yaml")
        text = None if path is None else self.text(path)
        if path is None or text is None:
            return None
        rel = self.rel(path)
        fields = {"id": item_id, "chapter_id": chapter.id, "path": rel}
        digest, kept = clean.look(rel, text)
        if kept is not None and len(kept) == 1:
            name = kept[0]  # the program it names (an exercise may name none)
            program = self.present_program(path.parent, name) if type(name) is str else None
            if program is not None or (name is None and kind is Exercise):
                clean.clean(rel, digest, kept)
                return built(eager, self.later(clean, text, rel, kind), program=program, **fields)
        meta = self.parse(text, rel, kind)
        if meta is None:
            return None
        clean.clean(rel, digest, [meta.program])
        if meta.program is not None:
            program = self.program(path.parent, meta.program, Where(meta, "program"))
        elif eager is Problem:  # (its schema requires the name of one)
            raise AssertionError(f"{rel}: a worked problem without a program")
        else:
            program = None
        return built(eager, meta, program=program, **fields)

    def program(self, folder: Path, name: str, named_at: At) -> Program:
        path = self.listed(named_at, "program", name, folder, name)
        if path is None:
            return Program(path=self.rel(folder / shorten(name, 200)), source=None)
        return Program(path=self.rel(path), source=self.text(path))

    def present_program(self, folder: Path, name: str) -> Program | None:
        """The program `name` beside a document, or None (nothing reported) when it is not there."""
        try:
            path = child(folder, name)
        except UnusableName:
            return None
        if not self.exists(path):
            return None
        return Program(path=self.rel(path), source=self.text(path))
