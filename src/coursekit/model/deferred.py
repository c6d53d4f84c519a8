"""Documents whose model is validated when a rule first reads it, not when the course loads.

A fresh run after a one-lesson edit re-checks one chapter, yet validating every lesson, problem
and exercise of the course from the cache was ~17% of it at 1,000 chapters. The loader builds
these instead for a document it has seen validate with no problem in the same content
(`coursekit.load.clean`): everything but `meta` is set at once, and `meta` is validated on
first read by `build`, then kept. Every other field is what the eager class holds, so a rule
cannot tell them apart; `dataclasses.replace` makes an object whose `meta` is already read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coursekit.model.documents import Exercise, LessonFrontMatter, WorkedProblem
from coursekit.model.tree import ExerciseDoc, Lesson, Problem


def _validated_when_read(base: type) -> Any:
    """A `meta` property over the base class's slot: None there means not validated yet."""
    slot = base.__dict__["meta"]

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
    build: Callable[[], LessonFrontMatter] | None
    meta = _validated_when_read(Lesson)

    @classmethod
    def later(cls, build: Callable[[], LessonFrontMatter], **fields: Any) -> Lesson:
        lesson = cls(meta=None, **fields)  # type: ignore[arg-type]
        lesson.build = build
        return lesson


class DeferredProblem(Problem):
    __slots__ = ("build",)
    build: Callable[[], WorkedProblem] | None
    meta = _validated_when_read(Problem)

    @classmethod
    def later(cls, build: Callable[[], WorkedProblem], **fields: Any) -> Problem:
        problem = cls(meta=None, **fields)  # type: ignore[arg-type]
        problem.build = build
        return problem


class DeferredExercise(ExerciseDoc):
    __slots__ = ("build",)
    build: Callable[[], Exercise] | None
    meta = _validated_when_read(ExerciseDoc)

    @classmethod
    def later(cls, build: Callable[[], Exercise], **fields: Any) -> ExerciseDoc:
        exercise = cls(meta=None, **fields)  # type: ignore[arg-type]
        exercise.build = build
        return exercise
