"""Documents whose model is validated when a rule first reads it, not when the course loads.

A fresh run after a one-lesson edit re-checks one chapter, yet validating every lesson, problem
and exercise of the course from the cache was ~17% of it at 1,000 chapters. The loader builds
these instead for a document it has seen validate with no problem in the same content
(`coursekit.load.clean`): everything but `meta` is set at once, and `meta` is validated on
first read by `build`, then kept (`built` makes one or the other). Every other field is what the eager class holds, so a rule
cannot tell them apart; `dataclasses.replace` makes an object whose `meta` is already read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from coursekit.memo import ByIdentity
from coursekit.model.base import Node
from coursekit.model.documents import ChapterManifest
from coursekit.model.tree import Chapter, ExerciseDoc, Lesson, Problem

Doc = TypeVar("Doc", Lesson, Problem, ExerciseDoc)


def built(eager: type[Doc], meta: Node | Callable[[], Node], **fields: Any) -> Doc:
    """The document of class `eager` with the other `fields`: holding `meta` when it is the
    validated model, else of that class's deferred kind, which calls `meta` when first read."""
    if isinstance(meta, Node):
        validated: Any = meta  # (of the model class `eager` holds: the loader's to match)
        return eager(meta=validated, **fields)
    made: Any = _DEFERRED[eager](meta=None, **fields)
    made.build = meta
    return cast(Doc, made)


def _validated_when_read(base: type, name: str = "meta") -> Any:
    """A property over the base class's slot `name`: None there means not validated yet."""
    slot = base.__dict__[name]

    def read(self: Any) -> Any:
        value = slot.__get__(self, base)
        if value is None:
            value = self.build()
            slot.__set__(self, value)
            self.build = None  # what it held (the text, the loader) is not needed again
        return value

    def write(self: Any, value: Any) -> None:
        slot.__set__(self, value)

    return property(read, write)


class DeferredLesson(Lesson):
    __slots__ = ("build",)
    meta = _validated_when_read(Lesson)


class DeferredProblem(Problem):
    __slots__ = ("build",)
    meta = _validated_when_read(Problem)


class DeferredExercise(ExerciseDoc):
    __slots__ = ("build",)
    meta = _validated_when_read(ExerciseDoc)


Documents = tuple[dict[str, Lesson], dict[str, Problem], dict[str, ExerciseDoc]]


def _made_when_read(name: str) -> Any:
    """A property over `Chapter`'s slot `name` (its lessons, problems or exercises): while the
    chapter's `documents` are still to be made, the first read makes all three."""
    slot = Chapter.__dict__[name]

    def read(self: Any) -> Any:
        make = self.documents
        if make is not None:
            made = make()  # (should it raise, they are still to be made, not left empty)
            for field, docs in zip(_DOCUMENTS, made, strict=True):
                Chapter.__dict__[field].__set__(self, docs)
            self.documents = None
        return slot.__get__(self, Chapter)

    def write(self: Any, value: Any) -> None:
        slot.__set__(self, value)

    return property(read, write)


_DOCUMENTS = ("lessons", "problems", "exercises")


class DeferredChapter(Chapter):
    """A chapter whose manifest is validated when first read; what the course-wide facts
    read of it (its id, its outline, the apparatus it links) is known without it. Its
    documents may be made when first read too (`documents`), from what a record of its
    load kept: `held` names them and `paths` the files they are read from."""

    __slots__ = (
        "build",
        "documents",
        "held",
        "known_id",
        "links",
        "listed",
        "notation",
        "outline",
        "paths",
        "status",
    )
    manifest = _validated_when_read(Chapter, "manifest")
    lessons = _made_when_read("lessons")
    problems = _made_when_read("problems")
    exercises = _made_when_read("exercises")
    documents: Callable[[], Documents] | None
    held: list[list[str]]  # the ids of its lessons, problems and exercises, in order
    paths: list[str]  # the files its documents and their programs are read from
    known_id: str
    outline: list[Any]
    links: list[str]
    notation: list[Any]
    status: str
    listed: list[list[str]]

    @property
    def id(self) -> str:
        return self.known_id


def deferred_chapter(
    build: Callable[[], ChapterManifest], known: list[Any], **fields: Any
) -> Chapter:
    """A chapter whose manifest `build` validates when first read (see `DeferredChapter`), and
    what `chapter_known` gave of it."""
    made: Any = DeferredChapter(manifest=cast(Any, None), **fields)
    made.build, made.documents = build, None
    made.known_id, made.outline, made.links, made.notation, made.status, made.listed = known
    return cast(Chapter, made)


def documents_later(
    chapter: Chapter, make: Callable[[], Documents], held: list[list[str]], paths: list[str]
) -> None:
    """The deferred chapter's documents: `make` makes them when they are first read; `held`
    (the ids of its lessons, problems and exercises) and `paths` (the files they and their
    programs are read from) say what they are without making them."""
    assert isinstance(chapter, DeferredChapter)
    chapter.documents, chapter.held, chapter.paths = make, held, paths


def chapter_held(chapter: Chapter) -> list[list[str]]:
    """The ids of the lessons, problems and exercises that loaded, without making a deferred
    chapter's documents."""
    if isinstance(chapter, DeferredChapter) and chapter.documents is not None:
        return chapter.held
    return [list(chapter.lessons), list(chapter.problems), list(chapter.exercises)]


def chapter_paths(chapter: Chapter) -> list[str]:
    """The files its loaded documents and their programs are read from, without making a
    deferred chapter's documents."""
    if isinstance(chapter, DeferredChapter) and chapter.documents is not None:
        return chapter.paths
    paths = [lesson.path for lesson in chapter.lessons.values()]
    docs: list[Problem | ExerciseDoc] = [*chapter.problems.values(), *chapter.exercises.values()]
    for doc in docs:
        paths.append(doc.path)
        if doc.program is not None:
            paths.append(doc.program.path)
    return paths


def chapter_known(chapter: Chapter) -> list[Any]:
    """What the course-wide facts and comparisons read of a chapter's manifest, as plain data:
    its id, `chapter_outline`, `chapter_links`, `chapter_notation`, its status and
    `chapter_listed`."""
    return [
        chapter.id,
        chapter_outline(chapter),
        chapter_links(chapter),
        chapter_notation(chapter),
        chapter_status(chapter),
        chapter_listed(chapter),
    ]


def chapter_outline(chapter: Chapter) -> list[Any]:
    """Its item ids, figure numbers and proposition numbers (what another chapter's references
    resolve against), without validating a deferred manifest."""
    if isinstance(chapter, DeferredChapter):
        return chapter.outline
    manifest = chapter.manifest
    return [
        [item.id for item in manifest.items],
        [figure.number for figure in manifest.figures],
        [prop.number for prop in manifest.propositions],
    ]


# An eager chapter's links and notation rows, by the identity of its manifest, in a process
# that checks again and again (`coursekit.memo`): a deferred chapter's are the same objects
# from run to run, and so are these while the manifest is, so a rule may remember what it
# worked out from them by their identity, whichever kind of chapter they came from.
_LINKS: ByIdentity[list[str]] = ByIdentity(100_000)
_NOTATION: ByIdentity[list[Any]] = ByIdentity(100_000)


def chapter_links(chapter: Chapter) -> list[str]:
    """The ids of the apparatus entries it links, sorted and once each, without validating a
    deferred manifest."""
    if isinstance(chapter, DeferredChapter):
        return chapter.links
    manifest = chapter.manifest
    return _LINKS.get(manifest, lambda: sorted({link.id for link in manifest.apparatus}))


def chapter_notation(chapter: Chapter) -> list[Any]:
    """Its notation table as [symbol, meaning, local] rows, in order, without validating a
    deferred manifest (CK201 compares them across the course)."""
    if isinstance(chapter, DeferredChapter):
        return chapter.notation
    table = chapter.manifest.notation
    return _NOTATION.get(table, lambda: [[e.symbol, e.meaning, e.local] for e in table])


def chapter_status(chapter: Chapter) -> str:
    """Its manifest's `status` ("draft" or "published"), without validating a deferred one."""
    if isinstance(chapter, DeferredChapter):
        return chapter.status
    return chapter.manifest.status


def chapter_listed(chapter: Chapter) -> list[list[str]]:
    """The ids of the lessons its items name, of its problems and of its exercises, without
    validating a deferred manifest."""
    if isinstance(chapter, DeferredChapter):
        return chapter.listed
    manifest = chapter.manifest
    lessons = [item.lesson for item in manifest.items if item.lesson is not None]
    return [lessons, list(manifest.problems), list(manifest.exercises)]


_DEFERRED: dict[type, type] = {
    Lesson: DeferredLesson,
    Problem: DeferredProblem,
    ExerciseDoc: DeferredExercise,
}
