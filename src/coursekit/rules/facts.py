"""Course-wide facts a per-chapter rule may consult, each as a digest of exactly that fact.

A per-chapter rule names the facts it reads (`@rule(..., per_chapter=("book0_linked",))`);
its results on a chapter are kept under the chapter's own files plus these digests, so an edit
elsewhere in the course that leaves the facts alone does not re-run it there. A fact is a
function of the course and the chapter being checked: `book0_linked` is the Book 0 entries
*that chapter* links, so renaming one entry's title re-checks only the chapters linking it.
Adding a fact: a function here and its name in `FACTS`; a digest must cover everything a rule
could read through the fact, or a stale finding would be replayed.

A rule that compares chapters (one meaning per symbol, support of a proposition from any
chapter) reads each chapter through a small `summary`, kept in the store under the chapter's
digest: an edit recomputes the edited chapter's summary, and the comparison runs on the others'
kept ones. What depended on the clock (a timeout, a killed worker) marks its chapter `unsteady`,
and nothing found there is kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from coursekit.bounds import paths_below
from coursekit.model.deferred import chapter_links, chapter_outline, chapter_paths
from coursekit.model.documents import CourseManifest
from coursekit.model.tree import Chapter, Course
from coursekit.rules._broken import APPARATUS_BOOK, book0_did_not_load
from coursekit.store import ResultStore

Fact = Callable[[Course, Chapter], str]
SUMMARIES = "summaries"  # the store's namespace of per-chapter summaries
_UNSTEADY = ("facts", "unsteady")
MANIFESTS = ("facts", "manifests")  # derived from the manifests (and which files exist) alone
FILES = ("facts", "files")  # which files each chapter holds


def digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def chapter_files(course: Course, chapter: Chapter) -> list[str]:
    """Every project-relative file the chapter holds or lists, whether or not it loaded."""
    return files_by_chapter(course).get(chapter.id) or sorted(_listed(chapter))


def _text_digest(course: Course, path: str) -> str | None:
    text = course.texts.get(path)
    if text is None:
        return None
    known = course.digests.get(path)  # the same hash of the same bytes, taken by the lookup
    if known is not None:
        return known
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def files_by_chapter(course: Course) -> dict[str, list[str]]:
    """Each chapter's files: the texts below its folder (a folder nested in another chapter's
    is that chapter's too) and what it lists."""

    def compute() -> dict[str, list[str]]:
        # The texts sorted once, a folder's a run of them (`paths_below`): ~0.1 s at 1,000
        # chapters went to looking each text's folder up among the chapters' instead.
        texts = sorted(course.texts)
        out: dict[str, list[str]] = {}
        for chapter_id, chapter in course.chapters.items():
            listed = _listed(chapter)
            if chapter.dir:
                listed.update(paths_below(texts, chapter.dir))
            out[chapter_id] = sorted(listed)
        return out

    return course.derive(FILES, compute)


def _listed(chapter: Chapter) -> set[str]:
    return {chapter.path, *chapter_paths(chapter)}


def chapter_digest(course: Course, chapter: Chapter) -> str:
    """What the chapter is made of: its id and book, each file's text, which assets exist."""

    def compute() -> str:
        # NUL-joined: paths hold no NUL and no part is empty, so the parts (and the sections
        # between two NULs) read back one way; the head's fields, which a quoted YAML string
        # could give a NUL, each after its length. (JSON of the whole took ~20 ms at 1,000
        # chapters; JSON of the head and a call per file, ~3-8 ms of the 13-21 left.)
        texts, digests = course.texts, course.digests
        parts = [f"{len(field)}:{field}" for field in (chapter.id, chapter.book_id, chapter.dir)]
        parts.append("")
        for path in chapter_files(course, chapter):
            known = digests.get(path)  # (`_text_digest`, inline)
            if known is None:
                known = _text_digest(course, path) or "-"
            elif path not in texts:
                known = "-"
            parts += (path, known)
        parts.append("")
        parts += sorted(chapter.assets)
        text = "\0".join(parts)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    return course.derive(("facts", "chapter", chapter.id), compute)


def summary(
    course: Course,
    store: ResultStore,
    name: str,
    chapter: Chapter,
    compute: Callable[[], Any],
    facts: Sequence[str] = (),
) -> Any:
    """What `compute` (a function of the chapter's files and the named facts alone, returning
    plain JSON data: lists, not tuples) gives for the chapter, kept in the store."""

    def fresh() -> Any:
        # one entry per chapter, holding the key it was computed under: an edit finds the
        # stale entry where the last run left it (its pack), rather than missing a new key
        key = chapter_key(course, chapter, facts)
        entry = _summary_entry(name, chapter.id)
        kept = store.get(SUMMARIES, entry)
        if isinstance(kept, list) and len(kept) == 2 and kept[0] == key:
            return kept[1]
        value = json.loads(json.dumps(compute()))  # the same shape, kept or not
        store.put(SUMMARIES, entry, [key, value])
        return value

    return course.derive(("facts", "summary", name, chapter.id, *facts), fresh)


@functools.lru_cache(maxsize=1 << 16)
def _summary_entry(name: str, chapter_id: str) -> str:
    """The store key of a chapter's summary (the same in every run: a JSON dump and a hash
    per chapter were a tenth of the daemon's run after a Book 0 title was renamed)."""
    return digest([name, chapter_id])


def fact(course: Course, name: str, chapter: Chapter) -> str:
    """The named fact's digest for the chapter, once per run (every fact reads manifests
    alone, so a course patched with new lesson texts keeps it: coursekit.rules.carried). A
    fact that is the same for every chapter is worked out once per course, not once per
    chapter: at 1,000 chapters the per-chapter lookups were most of the daemon's plan after
    a Book 0 title was renamed."""
    if name in PER_CHAPTER:
        return course.derive(
            (*MANIFESTS, "of", name, chapter.id), lambda: FACTS[name](course, chapter)
        )
    return course.derive((*MANIFESTS, "of", name), lambda: FACTS[name](course, chapter))


def chapter_key(course: Course, chapter: Chapter, facts: Sequence[str]) -> str:
    """What a per-chapter result on the chapter is kept under: its digest and those facts'."""

    def compute() -> str:
        # digests (hex) joined by NUL, not a JSON list: 8,000 keys at 1,000 chapters
        parts = [chapter_digest(course, chapter), *(fact(course, n, chapter) for n in facts)]
        return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]

    return course.derive(("facts", "chapter", chapter.id, "key", *facts), compute)


def unsteady(course: Course, chapter_id: str) -> None:
    """What was found in the chapter this run depended on the clock: keep none of it."""
    marked: set[str] = course.derive(_UNSTEADY, set)
    marked.add(chapter_id)


def unsteady_chapters(course: Course) -> frozenset[str]:
    marked: set[str] = course.derive(_UNSTEADY, set)
    return frozenset(marked)


def _book0_entries(course: Course) -> dict[str, tuple[str, str]]:
    """Each Book 0 entry's id -> (its fields as JSON, where it is declared); the first wins."""

    def compute() -> dict[str, tuple[str, str]]:
        book = course.books.get(APPARATUS_BOOK)
        found: dict[str, tuple[str, str]] = {}
        for entry in book.manifest.apparatus if book else []:
            found.setdefault(entry.id, (entry.model_dump_json(), entry.source_path))
        return found

    return course.derive((*MANIFESTS, "book0"), compute)


def book0_loaded(course: Course, chapter: Chapter) -> str:
    """Where Book 0 is declared, and whether it loaded."""

    def compute() -> str:
        book = course.books.get(APPARATUS_BOOK)
        return digest([book.path if book else None, book0_did_not_load(course)])

    return course.derive((*MANIFESTS, "book0_loaded"), compute)


def book0_ids(course: Course, chapter: Chapter) -> str:
    """Book 0's entry ids, where Book 0 is declared, and whether it loaded."""
    return course.derive(
        (*MANIFESTS, "book0_ids"),
        lambda: digest([sorted(_book0_entries(course)), book0_loaded(course, chapter)]),
    )


def book0_linked(course: Course, chapter: Chapter) -> str:
    """The Book 0 entries this chapter's apparatus links (all their fields), by id."""
    return _linked(course, chapter, "book0", _book0_entries(course))


def apparatus_linked(course: Course, chapter: Chapter) -> str:
    """The apparatus entries (of any book: the first declaration wins) this chapter links."""

    def compute() -> dict[str, tuple[str, str]]:
        return {i: (e.model_dump_json(), e.source_path) for i, e in course.apparatus.items()}

    entries = course.derive((*MANIFESTS, "apparatus"), compute)
    return _linked(course, chapter, "apparatus", entries)


def apparatus_notation(course: Course, chapter: Chapter) -> str:
    """The notation tables of the apparatus entries (of any book: the first declaration wins)
    this chapter links, every field and where each value and key is written, and which of its links
    resolve: what its lessons' maths inherits (a renamed title does not change it)."""

    def compute() -> dict[str, tuple[str, str]]:
        return {
            entry_id: (
                json.dumps([e.model_dump(mode="json") for e in entry.notation]),
                json.dumps([entry.source_path, entry.positions("notation")]),
            )
            for entry_id, entry in course.apparatus.items()
        }

    entries = course.derive((*MANIFESTS, "apparatus_notation"), compute)
    return _linked(course, chapter, "apparatus_notation", entries)


def _linked(
    course: Course, chapter: Chapter, table: str, entries: dict[str, tuple[str, str]]
) -> str:
    """The digest of the entries (of the course-wide `table`) the chapter links, once per set
    of ids: chapters link much the same few entries (1,000 chapters, a handful of sets)."""
    linked = tuple(chapter_links(chapter))  # (a deferred chapter's manifest stays unread)
    return course.derive(
        (*MANIFESTS, "linked", table, linked),
        lambda: digest([[i, entries.get(i)] for i in linked]),
    )


def _of_course_yaml(course: Course, name: str, read: Callable[[CourseManifest], object]) -> str:
    """The digest of what `read` takes of course.yaml (None: it did not load), and where it is."""
    manifest = course.manifest
    return course.derive(
        (*MANIFESTS, name),
        lambda: digest([course.manifest_path, None if manifest is None else read(manifest)]),
    )


def course_notation(course: Course, chapter: Chapter) -> str:
    """course.yaml's notation table (every field), and where course.yaml is."""
    return _of_course_yaml(
        course, "course_notation", lambda m: [e.model_dump_json() for e in m.notation]
    )


def course_ladder(course: Course, chapter: Chapter) -> str:
    """course.yaml's strands and maturity ladder (every field), and where course.yaml is."""

    def read(manifest: CourseManifest) -> object:
        return [
            [e.model_dump_json() for e in table] for table in (manifest.strands, manifest.maturity)
        ]

    return _of_course_yaml(course, "course_ladder", read)


def chapter_ids(course: Course, chapter: Chapter) -> str:
    """The ids of every chapter that loaded."""
    return course.derive((*MANIFESTS, "chapter_ids"), lambda: digest(sorted(course.chapters)))


def chapter_summaries(course: Course, chapter: Chapter) -> str:
    """What a reference into another chapter resolves against, for every chapter: the books'
    and the course's lists, which chapters loaded, and each one's path, items (lessons and
    planned), figure numbers and proposition numbers."""

    def compute() -> str:
        listed = {book_id: book.manifest.chapters for book_id, book in course.books.items()}
        books = course.manifest.books if course.manifest is not None else None
        each = {
            chapter_id: [loaded.path, *chapter_outline(loaded)]
            for chapter_id, loaded in course.chapters.items()
        }
        return digest([books, listed, each])

    return course.derive((*MANIFESTS, "chapter_summaries"), compute)


def notation_tables(course: Course, chapter: Chapter) -> str:
    """Every symbol of course.yaml's table and of each apparatus entry's, with where it is
    written (a rule reporting on a symbol there reads no more of those files)."""

    def compute() -> str:
        tables = [course.manifest.notation] if course.manifest is not None else []
        tables += [
            entry.notation for book in course.books.values() for entry in book.manifest.apparatus
        ]
        rows = []
        for table in tables:
            for entry in table:
                where = entry.loc("symbol")
                rows.append([entry.symbol, where.path, where.line, where.column])
        return digest(rows)

    return course.derive((*MANIFESTS, "notation_tables"), compute)


# The notation a chapter's lessons inherit (assumptions and shapes): course.yaml's table and
# the linked apparatus entries'. What a lesson's maths means reads these besides its own files.
INHERITED_NOTATION = ("course_notation", "apparatus_notation")

# The facts that differ from chapter to chapter (what it links); every other fact reads the
# course alone and is the same for every chapter (`fact` works it out once).
PER_CHAPTER = frozenset({"apparatus_linked", "apparatus_notation", "book0_linked"})

FACTS: dict[str, Fact] = {
    "apparatus_linked": apparatus_linked,
    "apparatus_notation": apparatus_notation,
    "book0_ids": book0_ids,
    "book0_loaded": book0_loaded,
    "book0_linked": book0_linked,
    "chapter_ids": chapter_ids,
    "chapter_summaries": chapter_summaries,
    "course_ladder": course_ladder,
    "course_notation": course_notation,
    "notation_tables": notation_tables,
}
