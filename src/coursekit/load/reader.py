"""Reading one course document: its text (or an editor's unsaved buffer), parsed and validated.

`DocumentReader` holds what a load collects (the course, its diagnostics, why documents did not
load) and reads a single YAML document or front matter into a model, reporting every problem
with file:line:col. What is read, in which order, is `coursekit.load.loader`'s walk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from coursekit.diagnostics import Diagnostic, Severity
from coursekit.load.clean import CleanDocuments, StaleRecord
from coursekit.load.listing import KnownTree, Listing
from coursekit.load.parsecache import cached_parse
from coursekit.load.validate import validate
from coursekit.load.yamlsafe import (
    LoadError,
    RealFolders,
    check_unsaved,
    read_text,
    split_front_matter,
)
from coursekit.model.base import Location, Node
from coursekit.model.deferred import built
from coursekit.model.documents import LessonFrontMatter
from coursekit.model.tree import Course, Lesson, LoadFailure, Unloaded
from coursekit.store import RunStore

if TYPE_CHECKING:
    from coursekit.store import ResultStore

N = TypeVar("N", bound=Node)


class Where:
    """A place in a loaded document, found only when a message needs it: finding it searches the
    document's packed position table (`parsecache.PackedSource`, ~50 µs in a large manifest:
    0.07 s of a 100-chapter load when done for every listed item), which a clean load skips."""

    __slots__ = ("node", "path")

    def __init__(self, node: Node, *path: str | int) -> None:
        self.node = node
        self.path = path

    def loc(self) -> Location:
        return self.node.loc(*self.path)


At = Location | Where


def _located(where: At) -> Location:
    return where.loc() if isinstance(where, Where) else where


# Validated documents kept between loads in one process (the language server): the model and
# what validating it reported, by (kind, path, line offset, text). Models are never changed
# after validation, so a document whose text is the same is the same model.
Models = dict[tuple[str, str, int, str], tuple[Any, list[Diagnostic]]]


# Told (the model kind, the parsed data) of a document whose text no run has seen: the caller
# may start ahead what such a document will need (check: the sympy server, for new claims).
ParsedAnew = Callable[[type[Node], Any], object]


class DocumentReader:
    def __init__(
        self,
        course_dir: Path,
        project_root: Path,
        store: ResultStore | None = None,
        overlays: Mapping[Path, str] | None = None,
        models: Models | None = None,
        parsed_anew: ParsedAnew | None = None,
        tree: KnownTree | None = None,
    ) -> None:
        self.store = store
        self.listing = Listing(course_dir, tree)  # what exists: the disk's word, or the tree's
        self.parsed_anew = parsed_anew  # told of each document the store did not hold
        self.models = models
        self.used: Models = {}  # what this load read from or added to `models`
        # Unsaved editor buffers (the language server): read in place of the file's content.
        self.overlays = {
            _key(path): text for path, text in (overlays or {}).items()
        }  # parsed documents are kept here (parsecache.cached_parse) when given
        self.course_dir = course_dir
        self.folders = RealFolders(course_dir)
        self.project_root = project_root
        self._below_root = str(project_root).rstrip("/") + "/"
        self.course = Course(root=self.rel(course_dir))
        self.diagnostics: list[Diagnostic] = []
        # folders a listed chapter claims, even when it claims several (CK109 reports that):
        # none of them is "unlisted"
        self.claimed: set[Path] = set()
        # the paths of the texts read while a chapter's load is recorded (coursekit.load.replay)
        self.reading: list[str] | None = None

    def rel(self, path: Path) -> str:
        # `relative_to` costs ~10 µs, called for every file and folder the load meets; a path
        # below the root is the root's text plus a separator and the rest (POSIX).
        text = str(path)
        if os.sep == "/" and text.startswith(self._below_root):
            return text[len(self._below_root) :]
        try:
            return path.relative_to(self.project_root).as_posix()
        except ValueError:
            return path.as_posix()

    def report(
        self,
        location: At,
        code: str,
        message: str,
        severity: Severity = Severity.ERROR,
        missing: Path | None = None,
    ) -> None:
        # A missing file is related to the finding: naming its path (as the pre-commit hook
        # does for a deleted file) reports the manifest that still lists it.
        related = (self.rel(missing),) if missing is not None else ()
        self.diagnostics.append(
            Diagnostic.at(_located(location), code, message, severity, related=related)
        )

    def failed(self, problems: list[Diagnostic]) -> None:
        """Remember why a document did not load: reports name it instead of dropping it."""
        self.course.failed.extend(
            LoadFailure(Location(d.path, d.line, d.column), d.code, d.message) for d in problems
        )

    def unloaded(self, kind: str, listed_id: str, listed_at: At, since: int) -> None:
        """A listed book or chapter is absent: the errors reported since `since` say why."""
        failures = tuple(
            LoadFailure(Location(d.path, d.line, d.column), d.code, d.message)
            for d in self.diagnostics[since:]
            if d.severity == Severity.ERROR
        ) or (LoadFailure(_located(listed_at), "CK106", f"'{listed_id}' is not a {kind} id"),)
        self.course.unloaded.setdefault((kind, listed_id), Unloaded(kind, listed_id, failures))

    def text(self, path: Path) -> str | None:
        rel = self.rel(path)
        overlay = self.overlays.get(_key(path)) if self.overlays else None
        try:
            text, digest = self._read(path) if overlay is None else (check_unsaved(overlay), None)
        except LoadError as exc:
            self.report(Location(rel, exc.line, exc.column), exc.code, exc.message)
            self.failed(self.diagnostics[-1:])
            return None
        self.course.texts[rel] = text
        if self.reading is not None:
            self.reading.append(rel)
        if digest is not None:
            self.course.digests[rel] = digest
        else:  # a digest must never stand beside another text than the one it was taken of
            self.course.digests.pop(rel, None)
        return text

    def _read(self, path: Path) -> tuple[str, str | None]:
        """The file's text, the known tree's when it keeps one, else read (and told); and the
        digest of it the tree vouches for, if any."""
        known = self.listing.known(path)
        if known is None:
            return read_text(path, self.folders), None
        tree, inside = known
        text = tree.text(inside)
        if text is None:
            try:
                text = read_text(path, self.folders)
            except LoadError:
                tree.refused(inside)
                raise
            if not tree.read(inside, text):
                return text, None
        return text, tree.digest(inside)

    def exists(self, path: Path) -> bool:
        """A file on disk (or in the known tree), or an open buffer not saved yet."""
        return (bool(self.overlays) and _key(path) in self.overlays) or self.listing.is_file(path)

    def document(self, path: Path, kind: type[N]) -> N | None:
        text = self.text(path)
        if text is None:
            return None
        return self.parse(text, self.rel(path), kind)

    def parse(self, text: str, rel: str, kind: type[N], line_offset: int = 0) -> N | None:
        if self.models is None:
            return self._parse(text, rel, kind, line_offset)
        key = (kind.__name__, rel, line_offset, text)
        hit = self.models.get(key)
        if hit is None:
            since = len(self.diagnostics)
            model = self._parse(text, rel, kind, line_offset)
            hit = (model, self.diagnostics[since:])
        else:
            self.diagnostics.extend(hit[1])
            if hit[0] is None:
                self.failed(hit[1])
        self.used[key] = hit
        return cast("N | None", hit[0])

    def clean_record(self, chapter_dir: str) -> CleanDocuments:
        """The chapter's record of documents that validated cleanly: off (it defers nothing)
        when this load keeps models itself, reads unsaved buffers or has a store dropped with
        the run (`check --no-cache`: nothing would be kept for a later one)."""
        kept = self.store is not None and not isinstance(self.store, RunStore)
        keeps = kept and self.models is None and not self.overlays
        return CleanDocuments(self.store if keeps else None, chapter_dir, self.course.digests)

    def later(
        self, clean: CleanDocuments, text: str, rel: str, kind: type[N], front_matter: bool = False
    ) -> Callable[[], N]:
        """Validating a document the clean record vouches for (or, with `front_matter`, a
        lesson's front matter) when it is first read: nothing is reported then (it was clean),
        and a failure means the cache was damaged."""

        def build() -> N:
            parts = split_front_matter(text) if front_matter else (text, "", 0)
            try:
                if parts is None:
                    raise StaleRecord(rel)
                data, source = cached_parse(self.store, parts[0], rel, int(front_matter))
                model, _ = validate(kind, data, source)
                if model is None:
                    raise StaleRecord(rel)
            except (StaleRecord, LoadError) as exc:
                clean.forget()
                raise StaleRecord(rel) from exc
            return model

        return build

    def vouched_lesson(
        self,
        clean: CleanDocuments,
        text: str,
        rel: str,
        lesson_id: str,
        chapter_id: str,
        place: list[int],
    ) -> Lesson:
        """A lesson the clean record vouches for, with the body `place` it kept (start, line):
        its front matter validated when first read."""
        build = self.later(clean, text, rel, LessonFrontMatter, front_matter=True)
        return built(
            Lesson,
            build,
            id=lesson_id,
            chapter_id=chapter_id,
            path=rel,
            text=text,
            body_start=place[0],
            body_line=place[1],
        )

    def _parse(self, text: str, rel: str, kind: type[N], line_offset: int = 0) -> N | None:
        try:
            if self.store is None:
                from coursekit.load.yamlparse import parse_yaml  # (ruamel: only to parse)

                data, source = parse_yaml(text, rel, line_offset)
            else:
                told = self.parsed_anew
                anew = None if told is None else (lambda data: told(kind, data))
                data, source = cached_parse(self.store, text, rel, line_offset, anew)
        except LoadError as exc:
            self.report(Location(rel, exc.line, exc.column), exc.code, exc.message)
            self.failed(self.diagnostics[-1:])
            return None
        model, problems = validate(kind, data, source)
        self.diagnostics.extend(problems)
        if model is None:
            self.failed(problems)
        return model


def _key(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))
