"""Owed content: what a chapter has written against what its maturity level requires.

The arithmetic is the course model's, exactly:

* written = items that exist and are not `planned` (a lesson counts in its front matter's
  strand); a problem or exercise counts only with a published solution, and a problem also
  needs a solution program that confirms it; anything marked `status: stub` (what
  `coursekit new` writes) is owed until the author removes the marker;
* problems owed = max(0, required - written); exercises owed likewise;
  variants owed = max(0, required - distinct variants among the written problems);
* owes = problems owed + exercises owed + max(0, variants owed - problems owed), because each
  new problem can bring one new variant;
* strands owe separately and are never part of `owes`: a surplus in one strand never pays for a
  deficit in another, and problems never pay for teaching.

A pure function of the loaded course. Whether a problem's program confirms its solution is
decided by the problem-running family (CK9xx); `rules.maturity.owed_of` passes that verdict in
as `confirmed`, for `coursekit owed` and the CK7xx rules alike. A verdict of None (the program
was not run: `--no-exec`) counts the problem when its program exists and its solution is
published, and tallies it as `unverified`.

Nothing is left out: a chapter that a book lists but that did not load is a row of its own
(`loads` false, with the failures that say why), and a loaded chapter whose lessons, problems or
exercises did not load carries those failures too, since its counts are then short.
"""

from __future__ import annotations

from dataclasses import field

from coursekit.model.base import Location
from coursekit.model.documents import MaturityLevel
from coursekit.model.tree import Chapter, Course, LoadFailure, Unloaded
from coursekit.records import record
from coursekit.written import Confirmed, exercise_written, problem_written, stubs_of


@record(frozen=True, slots=True)
class Count:
    written: int
    required: int

    @property
    def owed(self) -> int:
        return max(0, self.required - self.written)

    @property
    def met(self) -> bool:
        return self.owed == 0

    def as_dict(self) -> dict[str, int]:
        return {"written": self.written, "required": self.required}

    def __add__(self, other: Count) -> Count:
        return Count(self.written + other.written, self.required + other.required)


@record(frozen=True, slots=True)
class ChapterOwed:
    id: str
    title: str
    maturity: str
    maturity_name: str
    status: str
    strands: dict[str, Count]
    problems: Count
    variants: Count
    exercises: Count
    planned_apparatus: tuple[str, ...] = ()
    stubs: tuple[str, ...] = ()  # paths of lessons, problems, exercises still `status: stub`
    unverified: int = 0  # problems counted whose program was not run
    loads: bool = True  # False: the chapter's manifest did not load; nothing here is known
    failures: tuple[LoadFailure, ...] = ()  # why it, or some of its documents, did not load
    book: str = ""  # the book that lists it
    path: str = ""  # its chapter.yaml ("" when it did not load)
    # The files behind each count, by the count's name (a strand, "problems", "exercises",
    # "apparatus", "stubs"): what was counted as written, or where an entry is only planned.
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def owes(self) -> int:
        return (
            self.problems.owed
            + self.exercises.owed
            + max(0, self.variants.owed - self.problems.owed)
        )

    @property
    def strands_owed(self) -> int:
        return sum(count.owed for count in self.strands.values())

    @property
    def complete(self) -> bool:
        """Nothing owed anywhere: no strand, problem, variant, exercise or planned link."""
        return (
            self.loads
            and not self.failures
            and self.owes == 0
            and self.strands_owed == 0
            and not self.planned_apparatus
            and not self.stubs
        )

    def as_dict(self) -> dict[str, object]:
        return {  # `coverage`: numbers, displays, orders (kind -> status -> count)
            "id": self.id,
            "book": self.book,
            "path": self.path,
            "loads": self.loads,
            "failures": [failure_dict(f) for f in self.failures],
            "title": self.title,
            "maturity": self.maturity,
            "maturity_name": self.maturity_name,
            "status": self.status,
            "strands": {name: count.as_dict() for name, count in self.strands.items()},
            "problems": self.problems.as_dict(),
            "variants": self.variants.as_dict(),
            "exercises": self.exercises.as_dict(),
            "planned_apparatus": list(self.planned_apparatus),
            "stubs": list(self.stubs),
            "unverified": self.unverified,
            "files": {name: list(paths) for name, paths in self.files.items()},
            "coverage": self.coverage,
            # Unknown, not zero, for a chapter that did not load.
            "owes": self.owes if self.loads else None,
        }


def failure_dict(failure: LoadFailure) -> dict[str, object]:
    where = failure.location
    return {
        **{"path": where.path, "line": where.line, "column": where.column},
        "code": failure.code,
        "message": failure.message,
    }


@record(frozen=True, slots=True)
class CourseOwed:
    chapters: list[ChapterOwed] = field(default_factory=list)
    # Failures no chapter row can carry: course.yaml, or a book.yaml whose chapters are unknown.
    failures: tuple[LoadFailure, ...] = ()

    @property
    def incomplete(self) -> bool:
        """Something did not load, so the counts are not the whole truth."""
        return bool(self.failures) or any(c.failures or not c.loads for c in self.chapters)

    def caveat(self) -> str:
        """What the totals cannot include, in words ("" when they are the whole truth)."""
        parts: list[str] = []
        missing = sum(1 for c in self.chapters if not c.loads)
        if missing:
            parts.append(f"{_plural(missing, 'chapter')} not loaded: owed content unknown")
        short = sum(len(c.failures) for c in self.chapters if c.loads)
        if short:
            parts.append(f"{_plural(short, 'file')} not loaded: counts short")
        if self.failures:
            parts.append("the course or a book did not load: chapters missing")
        if self.total.unverified:
            parts.append(unverified(self.total.unverified))
        return "; ".join(parts)

    @property
    def total(self) -> ChapterOwed:
        """The course summed chapter by chapter (its `owes` is the sum of the chapters')."""
        strands: dict[str, Count] = {}
        problems = variants = exercises = Count(0, 0)
        for chapter in self.chapters:
            for name, count in chapter.strands.items():
                strands[name] = strands.get(name, Count(0, 0)) + count
            problems += chapter.problems
            variants += chapter.variants
            exercises += chapter.exercises
        return ChapterOwed(
            id="total",
            title="Course total",
            maturity="",
            maturity_name="",
            status="",
            strands=strands,
            problems=problems,
            variants=variants,
            exercises=exercises,
            planned_apparatus=tuple(a for c in self.chapters for a in c.planned_apparatus),
            stubs=tuple(path for c in self.chapters for path in c.stubs),
            unverified=sum(c.unverified for c in self.chapters),
        )

    @property
    def owes(self) -> int:
        # Summed per chapter: one chapter's surplus never pays for another's deficit.
        return sum(chapter.owes for chapter in self.chapters)

    def as_dict(self) -> dict[str, object]:
        total = self.total
        return {
            "chapters": [chapter.as_dict() for chapter in self.chapters],
            "failures": [failure_dict(f) for f in self.failures],
            "incomplete": self.incomplete,
            "total": {
                "strands": {name: count.as_dict() for name, count in total.strands.items()},
                "problems": total.problems.as_dict(),
                "variants": total.variants.as_dict(),
                "exercises": total.exercises.as_dict(),
                "planned_apparatus": len(total.planned_apparatus),
                "stubs": len(total.stubs),
                "owes": self.owes,
            },
        }


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def unverified(count: int) -> str:
    return f"{_plural(count, 'problem')} unverified (program not run)"


def level_of(course: Course, chapter: Chapter) -> MaturityLevel | None:
    if course.manifest is None:
        return None
    for level in course.manifest.maturity:
        if level.id == chapter.manifest.maturity:
            return level
    return None


def chapter_owed(
    course: Course, chapter: Chapter, confirmed: Confirmed | None = None
) -> ChapterOwed:
    level = level_of(course, chapter)
    requires = level.requires if level is not None else None
    strand_ids = [strand.id for strand in course.manifest.strands] if course.manifest else []
    for name in requires.strands if requires else {}:
        if name not in strand_ids:
            strand_ids.append(name)
    written: dict[str, list[str]] = {name: [] for name in strand_ids}
    for item in chapter.manifest.items:
        lesson = chapter.lessons.get(item.id) if item.lesson is not None else None
        if lesson is not None and lesson.meta.status != "stub":
            written.setdefault(lesson.meta.strand, []).append(lesson.path)
    strands = {
        name: Count(len(paths), requires.strands.get(name, 0) if requires else 0)
        for name, paths in written.items()
    }
    problems = [p for p in chapter.problems.values() if problem_written(p, confirmed)]
    unverified = sum(1 for p in problems if confirmed is None or confirmed(p) is None)
    exercises = [e for e in chapter.exercises.values() if exercise_written(e)]
    entries = course.apparatus
    planned = tuple(
        link.id
        for link in chapter.manifest.apparatus
        if link.id in entries and entries[link.id].status == "planned"
    )
    stubs = tuple(path for path, _ in stubs_of(chapter))
    files = {
        **{name: tuple(paths) for name, paths in written.items()},
        "problems": tuple(p.path for p in problems),
        "exercises": tuple(e.path for e in exercises),
        "apparatus": tuple(dict.fromkeys(_apparatus_path(course, entry) for entry in planned)),
        "stubs": stubs,
    }
    return ChapterOwed(
        id=chapter.id,
        title=chapter.manifest.title,
        maturity=chapter.manifest.maturity,
        maturity_name=level.name if level is not None else "",
        status=chapter.manifest.status,
        strands=strands,
        problems=Count(len(problems), requires.problems if requires else 0),
        variants=Count(
            len({p.meta.variant for p in problems}), requires.variants if requires else 0
        ),
        exercises=Count(len(exercises), requires.exercises if requires else 0),
        planned_apparatus=planned,
        stubs=stubs,
        unverified=unverified,
        failures=tuple(f for f in course.failed if f.location.path.startswith(chapter.dir + "/")),
        book=chapter.book_id,
        path=chapter.path,
        files=files,
    )


def _apparatus_path(course: Course, entry: str) -> str:
    """The book.yaml that lists a Book 0 entry."""
    for book in course.books.values():
        if any(listed.id == entry for listed in book.manifest.apparatus):
            return book.path
    return ""


def unloaded_owed(unloaded: Unloaded, book: str = "") -> ChapterOwed:
    """The row of a listed chapter that did not load: its failures, and nothing counted."""
    nothing = Count(0, 0)
    return ChapterOwed(
        id=unloaded.id,
        title="(does not load)",
        maturity="",
        maturity_name="",
        status="",
        strands={},
        problems=nothing,
        variants=nothing,
        exercises=nothing,
        loads=False,
        failures=unloaded.failures,
        book=book,
    )


def course_owed(
    course: Course, confirmed: Confirmed | None = None, chapter_ids: list[str] | None = None
) -> CourseOwed:
    """Owed content per chapter, in the course's reading order (books, then their chapters).

    Every listed chapter is a row, loaded or not; `chapter_ids` keeps only those ids.
    """
    rows: list[ChapterOwed] = []
    seen: set[str] = set()
    for book_id in course.manifest.books if course.manifest else []:
        book = course.books.get(book_id)
        for chapter_id in book.manifest.chapters if book else []:
            if chapter_id in seen:
                continue
            seen.add(chapter_id)
            chapter = course.chapters.get(chapter_id)
            unloaded = course.unloaded.get(("chapter", chapter_id))
            if chapter is not None:
                rows.append(chapter_owed(course, chapter, confirmed))
            elif unloaded is not None:
                rows.append(unloaded_owed(unloaded, book_id))
    rows += [
        chapter_owed(course, c, confirmed) for cid, c in course.chapters.items() if cid not in seen
    ]
    if chapter_ids is not None:
        rows = [row for row in rows if row.id in chapter_ids]
    return CourseOwed(rows, failures=_outside_chapters(course))


def _outside_chapters(course: Course) -> tuple[LoadFailure, ...]:
    """What failed to load above the chapters: course.yaml, or a book that hides its chapters."""
    if course.manifest is None:
        return tuple(course.failed) or (
            LoadFailure(Location(course.manifest_path), "CK109", "course.yaml does not load"),
        )
    books = [u for (kind, _), u in course.unloaded.items() if kind == "book"]
    return tuple(failure for book in books for failure in book.failures)


def known_ids(course: Course) -> list[str]:
    """Every chapter id `owed` can show: loaded, and listed but not loaded."""
    unloaded = [listed for kind, listed in course.unloaded if kind == "chapter"]
    return sorted({*course.chapters, *unloaded})
