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

from coursekit.model.base import Node
from coursekit.model.tree import ExerciseDoc, Lesson, Problem

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
    meta = _validated_when_read(Lesson)


class DeferredProblem(Problem):
    __slots__ = ("build",)
    meta = _validated_when_read(Problem)


class DeferredExercise(ExerciseDoc):
    __slots__ = ("build",)
    meta = _validated_when_read(ExerciseDoc)


_DEFERRED: dict[type, type] = {
    Lesson: DeferredLesson,
    Problem: DeferredProblem,
    ExerciseDoc: DeferredExercise,
}
