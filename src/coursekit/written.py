"""What counts as written, by the course model's arithmetic (`coursekit.owed`).

An item that exists and is not `planned` counts; a problem or an exercise only with a
published solution, a problem also with a program that confirms it (`confirmed`, the
problem-running family's verdict: None when the program was not run, and the problem then
counts when its program is there to run), an exercise whose answer is computed only with its
program; anything marked `status: stub` (what `coursekit new` writes) is owed until the
author removes the marker.
"""

from __future__ import annotations

from collections.abc import Callable

from coursekit.model.documents import Exercise, LessonFrontMatter, Solution, WorkedProblem
from coursekit.model.tree import Chapter, ExerciseDoc, Problem

Confirmed = Callable[[Problem], bool | None]  # None: not run (unverified)


def published(solution: Solution) -> bool:
    return solution.value is not None or bool(solution.text and solution.text.strip())


def program_exists(problem: Problem) -> bool:
    """The default verdict without running anything: the program is there to run."""
    return problem.program.source is not None


def problem_written(problem: Problem, confirmed: Confirmed | None = None) -> bool:
    if problem.meta.status == "stub" or not published(problem.meta.solution):
        return False
    verdict = confirmed(problem) if confirmed is not None else None
    return program_exists(problem) if verdict is None else verdict


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
