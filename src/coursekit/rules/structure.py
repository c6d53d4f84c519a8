"""Structure: files parse, documents match their schema, ids are well-formed, unique and placed.

CK101–CK105, CK109 and CK110 are found while loading; the rest are checks over the model.
A document with CK101–CK105 is not loaded, so those five are reported whatever `select` and
`ignore` say: a selection never hides content that went unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from coursekit import codes
from coursekit.diagnostics import Severity
from coursekit.hints import FEW, did_you_mean, one_of
from coursekit.model.base import Location, Node
from coursekit.model.ids import APPARATUS_ID, BOOK_ID, CHAPTER_ID
from coursekit.model.tree import Chapter, Course
from coursekit.rules.base import Context, Finding, documented, rule

SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

_LOADER_DOCS = [
    (
        "CK000",
        "internal-error",
        """\
        A rule crashed: a bug in coursekit, not in the course. The other rules' diagnostics are
        still reported, and `check` exits 2 (the tool failed). Please report it with the message.

        Fails:
            (no course text can fail this on purpose)
        Passes:
            every rule runs to completion
        """,
    ),
    (
        codes.YAML_SYNTAX,
        "yaml-syntax",
        """\
        A YAML file (or a lesson's front matter) does not parse.

        The message is the parser's, at the line and column where it gave up. Also reported for
        documents that expand past 50,000 values through aliases, or nest deeper than 100 levels.
        A document that does not load is not checked, so CK101-CK105 are reported whatever
        `select` and `ignore` say.

        Fails:
            title: From Recurrence to Attention
              dek: indented under a scalar
        Passes:
            title: From Recurrence to Attention
            dek: One line.
        """,
    ),
    (
        codes.UNREADABLE,
        "unreadable-file",
        """\
        A course file cannot be read as text: binary content, invalid UTF-8, larger than 4 MiB,
        or a symbolic link that leads outside the course folder.

        Fails:
            a lesson saved as UTF-16, or lessons/intro.md -> /etc/passwd
        Passes:
            a UTF-8 text file inside the course folder
        """,
    ),
    (
        codes.UNKNOWN_KEY,
        "unknown-key",
        """\
        A key the document's schema does not know (often a typo: a "did you mean" follows).

        Fails:
            tesis: One sentence.
        Passes:
            thesis: One sentence.
        """,
    ),
    (
        codes.WRONG_TYPE,
        "wrong-type",
        """\
        A value of the wrong type or outside its allowed values (a list where a mapping belongs,
        a status other than draft or published, ...).

        Fails:
            status: finished
        Passes:
            status: draft
        """,
    ),
    (
        codes.MISSING_KEY,
        "missing-key",
        """\
        A required key is missing (the location is the mapping that lacks it).

        Fails:
            propositions:
              - number: 1
        Passes:
            propositions:
              - number: 1
                claim: One sentence.
                gloss: Why it holds.
        """,
    ),
    (
        codes.MISSING_FILE,
        "missing-file",
        """\
        A manifest lists something whose file is not there: a book without book.yaml, a chapter
        without its folder, a lesson without lessons/<id>.md, a problem without its program.

        Fails:
            items:
              - lesson: goodbye-to-recurrence   # but lessons/goodbye-to-recurrence.md is missing
        Passes:
            items:
              - lesson: goodbye-to-recurrence   # lessons/goodbye-to-recurrence.md exists
        """,
    ),
    (
        codes.UNLISTED_FILE,
        "unlisted-file",
        """\
        A chapter folder or lesson file exists but no manifest lists it, so no check and no
        count sees it. List it (or delete it).

        Fails:
            lessons/masks.md exists, chapter.yaml items do not mention `lesson: masks`
        Passes:
            items:
              - lesson: masks
        """,
    ),
]

for _code, _name, _doc in _LOADER_DOCS:
    documented(
        _code,
        _name,
        _doc,
        "meta" if _code == "CK000" else "structure",
        Severity.WARNING if _code == codes.UNLISTED_FILE else Severity.ERROR,
    )


def _slug_findings(
    owner: Node, field: str, value: str, what: str, *path: str | int
) -> Iterator[Finding]:
    if not SLUG.match(value):
        yield Finding(
            owner.loc(*path) if path else owner.loc(field),
            f"{what} id '{value}' is not a slug (lowercase letters, digits and single hyphens)",
        )


@rule("CK106", "id-malformed", per_chapter=(), course_part=True)
def id_malformed(ctx: Context) -> Iterator[Finding]:
    """An id does not have the form its kind requires.

    Books are `0` or a Roman numeral; chapters `<BOOK>.<N>` (`II.2`); apparatus entries
    `0.<AREA>.<NN>` (`0.LA.03`); lessons, planned items, problems, exercises and claims are
    slugs (`goodbye-to-recurrence`).

    Fails:
        id: II.02
    Passes:
        id: II.2
    """
    course = ctx.course
    if ctx.course_part and course.manifest is not None:
        for index, book_id in enumerate(course.manifest.books):
            if not BOOK_ID.match(book_id):
                yield Finding(
                    course.manifest.loc("books", index),
                    f"book id '{book_id}' must be 0 or a Roman numeral (I, II, ...)",
                )
    for book in course.books.values() if ctx.course_part else ():
        for index, chapter_id in enumerate(book.manifest.chapters):
            if not CHAPTER_ID.match(chapter_id):
                yield Finding(
                    book.manifest.loc("chapters", index),
                    f"chapter id '{chapter_id}' must be <BOOK>.<N>, like '{book.id}.{index + 1}'",
                )
        for index, entry in enumerate(book.manifest.apparatus):
            if not APPARATUS_ID.match(entry.id):
                yield Finding(
                    book.manifest.loc("apparatus", index, "id"),
                    f"apparatus id '{entry.id}' must be 0.<AREA>.<NN>, like '0.LA.03'",
                )
    for chapter in ctx.chapters():
        manifest = chapter.manifest
        for index, item in enumerate(manifest.items):
            key = "lesson" if item.lesson is not None else "planned"
            yield from _slug_findings(manifest, key, item.id, "item", "items", index, key)
        for key in ("problems", "exercises"):
            for index, slug in enumerate(getattr(manifest, key)):
                yield from _slug_findings(manifest, key, slug, key[:-1], key, index)
        for lesson in chapter.lessons.values():
            for index, claim in enumerate(lesson.meta.claims):
                yield from _slug_findings(
                    lesson.meta, "claims", claim.id, "claim", "claims", index, "id"
                )


@rule("CK107", "id-duplicate", per_chapter=(), course_part=True)
def id_duplicate(ctx: Context) -> Iterator[Finding]:
    """The same id is used twice where ids must be unique.

    Books in course.yaml, chapters across all books, apparatus entries, the items of a chapter
    (written and planned share one namespace), its problems and exercises, a lesson's claims.
    Each repeat after the first is reported.

    Fails:
        items:
          - lesson: masks
          - planned: masks
            strand: theory
            title: Masks
    Passes:
        items:
          - lesson: masks
    """
    course = ctx.course
    if ctx.course_part and course.manifest is not None:
        for index, book_id in _repeats(course.manifest.books):
            yield Finding(course.manifest.loc("books", index), f"book '{book_id}' is listed twice")
    if ctx.course_part:
        yield from _duplicates_across_books(course)
    for chapter in ctx.chapters():  # the ids inside one chapter: its own files alone
        yield from _duplicates_in_chapter(chapter)


def _repeats(values: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Each value met again after its first time, with its index."""
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            yield index, value
        seen.add(value)


def _duplicates_across_books(course: Course) -> Iterator[Finding]:
    """Chapter and apparatus ids are unique across books: a repeat names where the first is."""
    chapters_seen: dict[str, str] = {}
    entries_seen: dict[str, str] = {}
    for book in course.books.values():
        for index, chapter_id in enumerate(book.manifest.chapters):
            if chapter_id in chapters_seen:
                yield Finding(
                    book.manifest.loc("chapters", index),
                    f"chapter '{chapter_id}' is already listed in {chapters_seen[chapter_id]}",
                )
            chapters_seen.setdefault(chapter_id, book.path)
        for index, entry in enumerate(book.manifest.apparatus):
            if entry.id in entries_seen:
                yield Finding(
                    book.manifest.loc("apparatus", index, "id"),
                    f"apparatus entry '{entry.id}' is already defined in {entries_seen[entry.id]}",
                )
            entries_seen.setdefault(entry.id, book.path)


def _duplicates_in_chapter(chapter: Chapter) -> Iterator[Finding]:
    manifest = chapter.manifest
    for index, item_id in _repeats(item.id for item in manifest.items):
        key = "lesson" if manifest.items[index].lesson is not None else "planned"
        yield Finding(
            manifest.loc("items", index, key), f"item '{item_id}' appears twice in {chapter.id}"
        )
    for key in ("problems", "exercises"):
        for index, slug in _repeats(getattr(manifest, key)):
            yield Finding(manifest.loc(key, index), f"{key[:-1]} '{slug}' is listed twice")
    for lesson in chapter.lessons.values():
        for index, claim_id in _repeats(claim.id for claim in lesson.meta.claims):
            yield Finding(
                lesson.meta.loc("claims", index, "id"), f"claim '{claim_id}' is declared twice"
            )


@rule("CK108", "id-misplaced", per_chapter=(), course_part=True)
def id_misplaced(ctx: Context) -> Iterator[Finding]:
    """An id disagrees with where its file sits.

    `II/book.yaml` must say `id: II`; the chapter in `II/2-from-recurrence-to-attention/` must
    say `id: II.2` and be listed by book II.

    Fails:
        # II/2-from-recurrence-to-attention/chapter.yaml
        id: II.3
    Passes:
        # II/2-from-recurrence-to-attention/chapter.yaml
        id: II.2
    """
    for book_id, book in ctx.course.books.items() if ctx.course_part else ():
        if book.manifest.id != book_id:
            yield Finding(
                book.manifest.loc("id"),
                f"book id '{book.manifest.id}' does not match its folder '{book_id}/'",
            )
    for chapter in ctx.chapters():
        folder = chapter.dir.rsplit("/", 1)[-1]
        number = folder.split("-", 1)[0]
        expected = f"{chapter.book_id}.{number}"
        if chapter.manifest.id != expected:
            yield Finding(
                chapter.manifest.loc("id"),
                f"chapter id '{chapter.manifest.id}' does not match its folder: "
                f"'{chapter.book_id}/{folder}/' holds chapter '{expected}'",
            )


@rule("CK111", "unknown-name", per_chapter=("course_ladder",), course_part=True)
def unknown_name(ctx: Context) -> Iterator[Finding]:
    """A strand, maturity level or apparatus area that the course does not define.

    Strands and the maturity ladder live in course.yaml; areas in Book 0's book.yaml.

    Fails:
        maturity: M9
    Passes:
        maturity: M2
    """

    course = ctx.course
    if course.manifest is None:
        return
    strands = [strand.id for strand in course.manifest.strands]
    levels = [level.id for level in course.manifest.maturity]
    for chapter in ctx.chapters():
        yield from _unknown_in_chapter(chapter, strands, levels)
    if ctx.course_part:
        yield from _unknown_in_tables(course, strands)


def _unknown_in_tables(course: Course, strands: list[str]) -> Iterator[Finding]:
    """Names course.yaml's ladder and Book 0's entries use that the course does not define."""
    assert course.manifest is not None
    for index, level in enumerate(course.manifest.maturity):
        for strand in level.requires.strands:
            if strand not in strands:
                yield _unknown(
                    "strand",
                    strand,
                    strands,
                    course.manifest.loc("maturity", index, "requires", "strands", strand),
                )
    for book in course.books.values():
        for index, entry in enumerate(book.manifest.apparatus):
            if book.manifest.areas and entry.area and entry.area not in book.manifest.areas:
                yield _unknown(
                    "area",
                    entry.area,
                    list(book.manifest.areas),
                    book.manifest.loc("apparatus", index, "id"),
                )


def _unknown(kind: str, value: str, known: list[str], where: Location) -> Finding:
    hint = one_of(value, known, cutoff=0.5)
    if len(known) > FEW:
        hint = did_you_mean(value, known, cutoff=0.5, otherwise=f" (known: {', '.join(known)})")
    return Finding(where, f"unknown {kind} '{value}'{hint}")


def _unknown_in_chapter(
    chapter: Chapter, strands: list[str], levels: list[str]
) -> Iterator[Finding]:
    manifest = chapter.manifest
    if manifest.maturity not in levels:
        yield _unknown("maturity level", manifest.maturity, levels, manifest.loc("maturity"))
    for index, item in enumerate(manifest.items):
        if item.strand is not None and item.strand not in strands:
            yield _unknown("strand", item.strand, strands, manifest.loc("items", index, "strand"))
    for lesson in chapter.lessons.values():
        if lesson.meta.strand not in strands:
            yield _unknown("strand", lesson.meta.strand, strands, lesson.meta.loc("strand"))
