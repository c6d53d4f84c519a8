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
decided by the problem-running family (CK9xx); it passes that verdict in as `confirmed`.
Without it, a problem counts when its program file exists and its solution is published.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from coursekit.model.documents import (
    Exercise,
    LessonFrontMatter,
    MaturityLevel,
    Solution,
    WorkedProblem,
)
from coursekit.model.tree import Chapter, Course, ExerciseDoc, Problem

Confirmed = Callable[[Problem], bool]


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
            self.owes == 0
            and self.strands_owed == 0
            and not self.planned_apparatus
            and not self.stubs
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
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
            "owes": self.owes,
        }


@dataclass(frozen=True, slots=True)
class CourseOwed:
    chapters: list[ChapterOwed] = field(default_factory=list)

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
        )

    @property
    def owes(self) -> int:
        # Summed per chapter: one chapter's surplus never pays for another's deficit.
        return sum(chapter.owes for chapter in self.chapters)

    def as_dict(self) -> dict[str, object]:
        total = self.total
        return {
            "chapters": [chapter.as_dict() for chapter in self.chapters],
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


def published(solution: Solution) -> bool:
    return solution.value is not None or bool(solution.text and solution.text.strip())


def program_exists(problem: Problem) -> bool:
    """The default verdict without running anything: the program is there to run."""
    return problem.program.source is not None


def problem_written(problem: Problem, confirmed: Confirmed | None = None) -> bool:
    verdict = confirmed if confirmed is not None else program_exists
    stub = problem.meta.status == "stub"
    return not stub and published(problem.meta.solution) and verdict(problem)


def exercise_written(exercise: ExerciseDoc) -> bool:
    # An exercise whose answer is computed names a program; a missing one does not count.
    program_ok = exercise.program is None or exercise.program.source is not None
    stub = exercise.meta.status == "stub"
    return not stub and published(exercise.meta.solution) and program_ok


Written = LessonFrontMatter | WorkedProblem | Exercise


def stubs_of(chapter: Chapter) -> list[tuple[str, Written]]:
    """(path, document) of each listed lesson, problem and exercise still marked a stub."""
    documents: list[tuple[str, Written]] = [
        *((lesson.path, lesson.meta) for lesson in chapter.lessons.values()),
        *((problem.path, problem.meta) for problem in chapter.problems.values()),
        *((exercise.path, exercise.meta) for exercise in chapter.exercises.values()),
    ]
    return [(path, meta) for path, meta in documents if meta.status == "stub"]


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
    written: dict[str, int] = dict.fromkeys(strand_ids, 0)
    for item in chapter.manifest.items:
        lesson = chapter.lessons.get(item.id) if item.lesson is not None else None
        if lesson is not None and lesson.meta.status != "stub":
            written[lesson.meta.strand] = written.get(lesson.meta.strand, 0) + 1
    strands = {
        name: Count(count, requires.strands.get(name, 0) if requires else 0)
        for name, count in written.items()
    }
    problems = [p for p in chapter.problems.values() if problem_written(p, confirmed)]
    exercises = [e for e in chapter.exercises.values() if exercise_written(e)]
    entries = course.apparatus
    planned = tuple(
        link.id
        for link in chapter.manifest.apparatus
        if link.id in entries and entries[link.id].status == "planned"
    )
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
        stubs=tuple(path for path, _ in stubs_of(chapter)),
    )


def course_owed(
    course: Course, confirmed: Confirmed | None = None, chapter_ids: list[str] | None = None
) -> CourseOwed:
    """Owed content per chapter, in the course's reading order (books, then their chapters)."""
    ordered: list[Chapter] = []
    seen: set[str] = set()
    for book in course.books.values():
        for chapter_id in book.manifest.chapters:
            chapter = course.chapters.get(chapter_id)
            if chapter is not None and chapter_id not in seen:
                ordered.append(chapter)
                seen.add(chapter_id)
    ordered += [c for cid, c in course.chapters.items() if cid not in seen]
    if chapter_ids is not None:
        ordered = [c for c in ordered if c.id in chapter_ids]
    return CourseOwed([chapter_owed(course, chapter, confirmed) for chapter in ordered])
