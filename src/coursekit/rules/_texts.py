"""The prose and maths of a chapter, each text with a way to locate an offset inside it.

Several families read the same texts (notation reads their maths, propositions and
cross-references read their links and mentions), so they are gathered once here, in reading
order: the chapter's problem, its propositions, its figures, its lessons in item order, then its
worked problems and exercises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from coursekit.markdown import scan
from coursekit.model.base import Location, Node
from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.records import record

Locator = Callable[[int], Location]

# How far apart two consecutive non-space characters of a YAML scalar may sit in the file
# (folding and indentation); beyond it the alignment has lost its way and we fall back.
_MAX_GAP = 200


@record(frozen=True, slots=True)
class Text:
    value: str
    kind: str  # "problem" | "claim" | "gloss" | "figure" | "body" | "quiz" | "statement"
    locate: Locator
    lesson: Lesson | None = None


def _offset_of(text: str, line: int, column: int) -> int:
    offset = 0
    for _ in range(line - 1):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset + column - 1


def _location_of(path: str, text: str, offset: int) -> Location:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Location(path, line, column)


def yaml_locator(course: Course, node: Node, *path: str | int) -> Locator:
    """Locate an offset of the string value at `node.loc(*path)` in its file.

    The parsed string and the file agree on every non-space character of plain, folded and
    literal scalars, so walking both in step finds the exact line and column even after
    folding; quoted escapes merely shift the walk to the next matching character.
    """
    return _YamlLocator(course, node, path)


class _YamlLocator:
    """`yaml_locator`'s locator: a run keeps one for every text of every chapter, and as a
    closure (a function, its cells and a list) they held ~10 MB more at 1,000 chapters."""

    __slots__ = ("course", "node", "path", "start")

    def __init__(self, course: Course, node: Node, path: tuple[str | int, ...]) -> None:
        self.course = course
        self.node = node
        self.path = path
        self.start: Location | None = None  # the value's own location, read on first use

    def __call__(self, offset: int) -> Location:
        if self.start is None:
            self.start = self.node.loc(*self.path)
        start_loc = self.start
        text = self.course.texts.get(start_loc.path)
        value = _value_at(self.node, self.path)
        if text is None or value is None:
            return start_loc
        cursor = _offset_of(text, start_loc.line, start_loc.column)
        if cursor < len(text) and text[cursor] in ">|":
            newline = text.find("\n", cursor)
            cursor = newline + 1 if newline >= 0 else cursor
        elif cursor < len(text) and text[cursor] in "\"'":
            cursor += 1
        for index, char in enumerate(value[: offset + 1]):
            if char.isspace():
                continue
            found = text.find(char, cursor, cursor + _MAX_GAP)
            if found < 0:
                return start_loc
            if index == offset:
                return _location_of(start_loc.path, text, found)
            cursor = found + 1
        return start_loc


def _value_at(node: Node, path: tuple[str | int, ...]) -> str | None:
    value: object = node
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return None
            value = value[step]
        elif isinstance(value, Node):
            value = getattr(value, step, None)
        elif isinstance(value, dict):
            value = value.get(step)
        else:
            return None
    return value if isinstance(value, str) else None


def lesson_texts(course: Course, lesson: Lesson) -> Iterator[Text]:
    # The body as the run's scan of it holds it (`Lesson.body` cuts a new copy each time):
    # the rules scan it anyway, and a second copy of every body was ~16 MB at 1,000 chapters.
    yield Text(scan(lesson.body).text, "body", lesson.body_loc, lesson)
    meta = lesson.meta
    for q, question in enumerate(meta.quiz):
        yield Text(question.prompt, "quiz", yaml_locator(course, meta, "quiz", q, "prompt"), lesson)
        for o, option in enumerate(question.options):
            yield Text(
                option.text,
                "quiz",
                yaml_locator(course, meta, "quiz", q, "options", o, "text"),
                lesson,
            )
        if question.explanation:
            yield Text(
                question.explanation,
                "quiz",
                yaml_locator(course, meta, "quiz", q, "explanation"),
                lesson,
            )


def chapter_texts(course: Course, chapter: Chapter) -> tuple[Text, ...]:
    """Every text of a chapter that may hold maths, links or mentions, in reading order."""
    return course.derive_of(
        chapter.id, "chapter_texts", lambda: tuple(_chapter_texts(course, chapter))
    )


def _chapter_texts(course: Course, chapter: Chapter) -> Iterator[Text]:
    manifest = chapter.manifest
    yield Text(manifest.problem, "problem", yaml_locator(course, manifest, "problem"))
    for p, prop in enumerate(manifest.propositions):
        yield Text(prop.claim, "claim", yaml_locator(course, manifest, "propositions", p, "claim"))
        yield Text(prop.gloss, "gloss", yaml_locator(course, manifest, "propositions", p, "gloss"))
    for f, figure in enumerate(manifest.figures):
        for key in ("title", "caption", "alt"):
            value = getattr(figure, key)
            if value:
                yield Text(value, "figure", yaml_locator(course, manifest, "figures", f, key))
    for item in manifest.items:
        lesson = chapter.lessons.get(item.id) if item.lesson is not None else None
        if lesson is not None:
            yield from lesson_texts(course, lesson)
    for problem in chapter.problems.values():
        yield Text(
            problem.meta.statement, "statement", yaml_locator(course, problem.meta, "statement")
        )
    for exercise in chapter.exercises.values():
        yield Text(
            exercise.meta.statement, "statement", yaml_locator(course, exercise.meta, "statement")
        )
        if exercise.meta.solution.text:
            yield Text(
                exercise.meta.solution.text,
                "statement",
                yaml_locator(course, exercise.meta, "solution", "text"),
            )
