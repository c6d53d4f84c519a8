"""A chapter's load, replayed from what an earlier load of the very same files did.

Loading a chapter whose files did not change still walked it: every listed lesson, problem,
exercise and program found by building its path and asking whether it exists, every SVG
figure likewise, the lessons folder listed for files no item names. At 1,000 chapters that
walk was about a third of the load after a one-lesson edit (1.02 s in process; 0.69 s with
it replayed), and it found what it found the run before. A load that met no problem in a
chapter now keeps, per chapter folder, what it read and built there: the texts it read after
the manifest (in order), each lesson's place in its file and each problem's and exercise's
program. It is kept under a key of everything the walk could see: the length of the folder's
absolute path and every file below it with the digest of its content (the known tree's,
`KnownTree.digest`). The next load whose key is the same reads those texts and builds those
documents, and asks nothing of the folder.

Each document is still built as the clean path builds it (`coursekit.load.clean`): only when
the clean record vouches for its text, with the same place or program, and it is validated
when a rule first reads it. The manifest itself is validated as before. Only a load that
reads the tree from the cache records or replays (`SeenTree`: what exists and the digests are
this run's), with the clean record on (not the daemon's or the language server's load, not
`--no-cache`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from coursekit.codes import may_hold_directive
from coursekit.load.clean import StaleRecord
from coursekit.load.listing import MAX_ASSETS
from coursekit.load.parsecache import cached_parse
from coursekit.load.validate import validate
from coursekit.load.yamlsafe import LoadError
from coursekit.model.deferred import Documents, built, chapter_known, documents_later
from coursekit.model.documents import ChapterManifest, Exercise, WorkedProblem
from coursekit.model.tree import Chapter, ExerciseDoc, Lesson, Problem, Program
from coursekit.records import record as _record

if TYPE_CHECKING:
    from coursekit.load.clean import CleanDocuments
    from coursekit.load.listing import KnownTree
    from coursekit.load.reader import DocumentReader
    from coursekit.store import ResultStore

NAMESPACE = "chapters"
FORMAT = 3  # bump when a record's shape changes


@_record(frozen=True, slots=True)
class Key:
    """A chapter folder as a load sees it: the key of its record, and where it is in the tree."""

    digest: str
    tree: KnownTree
    inside: str  # the folder's path in the tree (relative to the course folder)


def folder_key(
    tree: KnownTree, inside: str, absolute: str, assets: list[str], rel: str
) -> Key | None:
    """The key of what a load of the chapter folder could see: the length of its absolute
    path (which decides whether a name is usable; not the path, so that a course copied
    elsewhere replays its records) and each file below it (`assets`, project-relative
    below `rel`; the folder is `inside` the tree) with its content's digest. None when it
    cannot stand for the folder: the listing stopped at `MAX_ASSETS`."""
    if len(assets) >= MAX_ASSETS:
        return None
    parts = [str(len(absolute.encode("utf-8", "surrogateescape")))]
    cut = len(rel)
    for path in sorted(assets):
        parts.append(path)
        parts.append(tree.digest(inside + path[cut:]) or "-")
    text = "\0".join(parts)
    return Key(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32], tree, inside)


def entry(chapter_dir: str) -> str:
    return f"{FORMAT}:{chapter_dir}"


Row = tuple[str, str, Any, Any]


@_record(slots=True)
class Recorded:
    """What a chapter's load read and built: the texts it read after the manifest (paths, in
    order), its lessons (id, path, body start, body line), its problems and exercises (id,
    path, the program's name or None, the program's path or None), each in the order the
    chapter holds them; what the course-wide facts read of its manifest, which validated
    with no problem (`coursekit.model.deferred.chapter_known`); and which of the texts read
    may hold a suppression directive (`codes.may_hold_directive`: the others are not scanned
    for one, `Course.plain`)."""

    read: list[str]
    lessons: list[Row]
    problems: list[Row]
    exercises: list[Row]
    manifest: list[Any]  # `chapter_known`'s data
    marked: list[str]

    def needed(self) -> list[tuple[str, list[Any]]]:
        """Each document's path and what the clean record must hold for it (`CleanDocuments`):
        a lesson's body place, a problem's or exercise's program name."""
        places = [(rel, [start, line]) for _id, rel, start, line in self.lessons]
        return places + [(rel, [name]) for _id, rel, name, _ in (*self.problems, *self.exercises)]

    def paths(self) -> list[str]:
        """The files its documents and their programs are read from."""
        paths = [row[1] for row in self.lessons]
        for _id, rel, _name, program_path in (*self.problems, *self.exercises):
            paths.append(rel)
            if program_path is not None:
                paths.append(program_path)
        return paths

    def encode(self) -> list[Any]:
        return [
            list(self.read),
            [list(row) for row in self.lessons],
            [list(row) for row in self.problems],
            [list(row) for row in self.exercises],
            self.manifest,
            list(self.marked),
        ]

    @classmethod
    def decode(cls, kept: list[Any]) -> Recorded | None:
        """The record of `encode`'s data as the store gave it back, or None for any other shape
        (a damaged or foreign entry is only a load that walks the folder)."""
        read, lessons, problems, exercises, manifest, marked = kept
        for paths in (read, marked):
            if not (isinstance(paths, list) and all(type(path) is str for path in paths)):
                return None
        rows = [_rows(lessons, int), _rows(problems, str), _rows(exercises, str)]
        if rows[0] is None or rows[1] is None or rows[2] is None:
            return None
        known = _manifest(manifest)
        if known is None:
            return None
        return cls(read, rows[0], rows[1], rows[2], known, marked)


def _manifest(kept: Any) -> list[Any] | None:
    """`chapter_known`'s data (id, outline, links, notation rows, status, listed ids), or None
    for another shape."""
    if not (isinstance(kept, list) and len(kept) == 6 and type(kept[0]) is str):
        return None
    outline, links, notation, status, listed = kept[1:]
    if not (_lists(outline, 3) and _lists(listed, 3) and isinstance(links, list)):
        return None
    if type(status) is not str:
        return None
    items, figures, propositions = outline
    if not all(type(i) is str for i in (*items, *links, *(i for ids in listed for i in ids))):
        return None
    if not all(type(n) is int for n in (*figures, *propositions)):
        return None
    if not (isinstance(notation, list) and all(_notation_row(row) for row in notation)):
        return None
    return kept


def _lists(kept: Any, count: int) -> bool:
    return isinstance(kept, list) and len(kept) == count and all(isinstance(k, list) for k in kept)


def _notation_row(row: Any) -> bool:
    return (
        isinstance(row, list)
        and len(row) == 3
        and type(row[0]) is str
        and type(row[1]) is str
        and type(row[2]) is bool
    )


def _rows(kept: Any, last: type) -> list[Row] | None:
    """Rows of two strings then two values of type `last` (or, for programs, both None)."""
    if not isinstance(kept, list):
        return None
    rows: list[Row] = []
    for row in kept:
        if not (isinstance(row, list) and len(row) == 4):
            return None
        first, second, third, fourth = row
        if type(first) is not str or type(second) is not str:
            return None
        pair_ok = type(third) is last and type(fourth) is last
        if not pair_ok and not (last is str and third is None and fourth is None):
            return None
        rows.append((first, second, third, fourth))
    return rows


def recalled(reader: DocumentReader, chapter_dir: str, key: Key) -> Recorded | None:
    """What the last load that met no problem in the folder did there, when its key is `key`."""
    assert reader.store is not None  # (a key is made only with a store)
    kept = reader.store.get(NAMESPACE, entry(chapter_dir))
    if not (isinstance(kept, list) and len(kept) == 7 and kept[0] == key.digest):
        return None
    return Recorded.decode(kept[1:])


def manifest_later(
    reader: DocumentReader, text: str, rel: str, chapter_dir: str
) -> Callable[[], ChapterManifest]:
    """Validating the manifest a record vouches for when it is first read: as the load would
    have, and nothing is reported (it validated with no problem). A failure means the cache
    was damaged: the record is dropped, so the next load validates it and reports."""

    def build() -> ChapterManifest:
        try:
            data, source = cached_parse(reader.store, text, rel, 0)
            model, problems = validate(ChapterManifest, data, source)
        except LoadError as exc:
            raise _stale(reader, rel, chapter_dir) from exc
        if model is None or problems:
            raise _stale(reader, rel, chapter_dir)
        return model

    return build


def _stale(reader: DocumentReader, rel: str, chapter_dir: str) -> StaleRecord:
    if reader.store is not None:
        reader.store.put(NAMESPACE, entry(chapter_dir), [])
    return StaleRecord(rel)


def replay(
    reader: DocumentReader, chapter: Chapter, key: Key, recorded: Recorded, clean: CleanDocuments
) -> bool:
    """The chapter's documents as the load recorded under `key` built them, made when first
    read, when the clean record still vouches for each of them; False, the course as it was,
    if not. (Most chapters of an edit's run are never read: making their ~5 documents each
    was ~0.15 s of a prose edit at 1,000 chapters.)"""
    course, cut, tree, inside = reader.course, len(chapter.dir), key.tree, chapter.dir + "/"
    texts: dict[str, str] = {}
    digests: dict[str, str] = {}  # the known tree's (a file over its cap has none)
    for rel in recorded.read:
        path = key.inside + rel[cut:]
        text = tree.text(path) if rel.startswith(inside) else None
        if text is None:
            return False
        texts[rel] = text
        digest = tree.digest(path)
        if digest is not None:
            digests[rel] = digest
    if not _vouched(recorded, texts, digests, clean):
        return False
    course.texts.update(texts)
    course.digests.update(digests)
    marked = set(recorded.marked)
    course.plain.update((rel, text) for rel, text in texts.items() if rel not in marked)
    kinds = (recorded.lessons, recorded.problems, recorded.exercises)
    held = [[row[0] for row in rows] for rows in kinds]
    make = functools.partial(_documents, reader, chapter.id, recorded, texts, clean)
    documents_later(chapter, make, held, recorded.paths())
    return True


def _vouched(
    recorded: Recorded, texts: dict[str, str], digests: dict[str, str], clean: CleanDocuments
) -> bool:
    """Whether the clean record still vouches for each recorded document (with the same body
    place or program), and each program's text is there; the clean record is told of them
    only when it does."""
    vouched: list[tuple[str, str, list[Any]]] = []  # path, digest, what was kept
    for rel, needed in recorded.needed():
        text = texts.get(rel)
        if text is None:
            return False
        digest, kept = clean.look(rel, text, digests.get(rel))
        if kept != needed:
            return False
        vouched.append((rel, digest, kept))
    for _doc_id, _rel, _name, program_path in recorded.problems:
        if program_path is None or program_path not in texts:  # (a problem names one)
            return False
    for _doc_id, _rel, _name, program_path in recorded.exercises:
        if program_path is not None and program_path not in texts:
            return False
    for rel, digest, kept in vouched:
        clean.clean(rel, digest, kept)
    return True


def _documents(
    reader: DocumentReader,
    chapter_id: str,
    recorded: Recorded,
    texts: dict[str, str],
    clean: CleanDocuments,
) -> Documents:
    """The recorded documents, each built deferred as the clean path builds it (`_vouched`
    said the clean record vouches for them)."""
    lessons: dict[str, Lesson] = {}
    for lesson_id, rel, start, line in recorded.lessons:
        lessons[lesson_id] = reader.vouched_lesson(
            clean, texts[rel], rel, lesson_id, chapter_id, [start, line]
        )
    problems: dict[str, Problem] = {}
    exercises: dict[str, ExerciseDoc] = {}
    for rows, kind, docs in (
        (recorded.problems, WorkedProblem, problems),
        (recorded.exercises, Exercise, exercises),
    ):
        eager: Any = Problem if kind is WorkedProblem else ExerciseDoc
        for doc_id, rel, _name, program_path in rows:
            source = None if program_path is None else texts[program_path]
            program = None if program_path is None else Program(path=program_path, source=source)
            later = reader.later(clean, texts[rel], rel, kind)
            fields = {"id": doc_id, "chapter_id": chapter_id, "path": rel}
            docs[doc_id] = built(eager, later, program=program, **fields)
    return lessons, problems, exercises


def record(
    store: ResultStore | None,
    chapter: Chapter,
    key: Key,
    read: list[str],
    clean: CleanDocuments,
    texts: Mapping[str, str],
) -> None:
    """Keep what a load that met no problem did in the chapter's folder, when the clean record
    vouches for every document it built (as a replay will ask it to); `texts`: the course's."""
    if store is None:
        return
    lessons: list[Row] = []
    for lesson_id, lesson in chapter.lessons.items():
        if lesson.path not in clean.now:
            return
        lessons.append((lesson_id, lesson.path, lesson.body_start, lesson.body_line))
    problems = _listed_rows(chapter.problems, clean)
    exercises = _listed_rows(chapter.exercises, clean)
    if problems is None or exercises is None:
        return
    marked = [rel for rel in read if rel not in texts or may_hold_directive(rel, texts[rel])]
    recorded = Recorded(read, lessons, problems, exercises, chapter_known(chapter), marked)
    value = [key.digest, *recorded.encode()]
    if store.get(NAMESPACE, entry(chapter.dir)) != value:
        store.put(NAMESPACE, entry(chapter.dir), value)


def _listed_rows(
    docs: dict[str, Problem] | dict[str, ExerciseDoc], clean: CleanDocuments
) -> list[Row] | None:
    """A record's rows of the chapter's problems or exercises (None: one is not vouched for)."""
    rows: list[Row] = []
    for doc_id, doc in docs.items():
        row = clean.now.get(doc.path)
        if row is None or len(row[1]) != 1:
            return None
        program = None if doc.program is None else doc.program.path
        rows.append((doc_id, doc.path, row[1][0], program))
    return rows
