"""What is under the cursor, and what it means in the course (shared by hover and definition).

The thing under the cursor is a course link (`apparatus:0.LA.03`, `lesson:II.2/masks`, ...), a
bare apparatus id (a chapter's `apparatus:` list), a tied number or claim id, a rule code in a
suppression, or a symbol in the maths (or a notation table's `symbol:`). Its target is a place
in the course plus a few lines of Markdown saying what it is. No pygls here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from coursekit.latex_symbols import declared_key, shown, symbols_in_markdown
from coursekit.model.base import Location
from coursekit.model.documents import NotationEntry
from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.records import record

if TYPE_CHECKING:
    from coursekit.lsp.state import CourseState

SCHEMES = ("lesson", "chapter", "fig", "prop", "apparatus", "eq")
_LINK = re.compile(r"\b(?P<scheme>lesson|chapter|fig|prop|apparatus|eq):(?P<rest>[^\s)\]\"'`,}]*)")
_CLAIM = re.compile(r"\{claim=(?P<id>[^}\s]*)\}|\bclaim:\s*(?P<yaml>[A-Za-z0-9_.-]+)")
_NUMBER = re.compile(r"\[(?P<text>[^\]\n]*)\]\{claim=(?P<id>[^}\s]*)\}")
_CODE = re.compile(r"\bCK[0-9]{1,3}\b")
_WORD = re.compile(r"[A-Za-z0-9_.-]+")
_SYMBOL_KEY = re.compile(r"^(\s*-?\s*)symbol:\s*(?P<value>.+?)\s*$")


@record(frozen=True)
class Found:
    """A thing under the cursor: its kind, name and span (offsets into the text)."""

    kind: str  # "link" | "apparatus" | "claim" | "code" | "symbol"
    name: str  # the link target, entry id, claim id, code or symbol key
    start: int
    end: int
    scheme: str = ""


@record(frozen=True)
class Target:
    location: Location | None  # None: nothing to jump to (an unknown code, a planned item)
    markdown: str


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


def find(text: str, offset: int, course: Course | None = None) -> Found | None:
    """The thing at `offset` in a document's text, if it is one coursekit knows."""
    start, end = _line_bounds(text, offset)
    line = text[start:end]
    at = offset - start

    def covering(pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        for match in pattern.finditer(line):
            if match.start() <= at <= match.end():
                yield match

    for match in covering(_LINK):
        return Found(
            "link", match.group(0), start + match.start(), start + match.end(), match["scheme"]
        )
    for match in covering(_NUMBER):
        return Found("claim", match["id"], start + match.start(), start + match.end())
    for match in covering(_CLAIM):
        name = match["id"] if match["id"] is not None else match["yaml"]
        return Found("claim", name, start + match.start(), start + match.end())
    if "coursekit:" in line:
        for match in covering(_CODE):
            return Found("code", match.group(0), start + match.start(), start + match.end())
    if course is not None:
        for match in covering(_WORD):
            if match.group(0) in course.apparatus:
                return Found(
                    "apparatus", match.group(0), start + match.start(), start + match.end()
                )
    symbol = _symbol_key(line)
    if symbol is not None:
        return Found("symbol", symbol, start, end)
    return _symbol_in_maths(text, offset)


def _symbol_key(line: str) -> str | None:
    match = _SYMBOL_KEY.match(line)
    if match is None:
        return None
    value = match["value"].strip("'\"")
    return declared_key(value)


def _symbol_in_maths(text: str, offset: int) -> Found | None:
    """The symbol whose spelling covers `offset` (only maths is read: `$...$`, `$$...$$`)."""
    best = None
    for use in symbols_in_markdown(text):
        if use.offset > offset:
            break
        best = use
    if best is None:
        return None
    start, end = _line_bounds(text, best.offset)
    if not start <= offset <= end:
        return None
    tail = re.match(
        r"[\\A-Za-z]+(?:\{[^}]*\})?(?:_(?:\{[^}]*\}|[A-Za-z0-9]))?", text[best.offset :]
    )
    length = tail.end() if tail else 1
    if offset > best.offset + length:
        return None
    return Found("symbol", best.key, best.offset, best.offset + length)


# Resolution ---------------------------------------------------------------------------------


def look_up(state: CourseState, text: str, offset: int, rel: str) -> tuple[Found, Target] | None:
    """The thing at `offset` in the file `rel` and its target, in the latest snapshot."""
    if state.snapshot is None:
        return None
    course = state.snapshot.course
    found = find(text, offset, course)
    if found is None:
        return None
    target = resolve(found, course, state.chapter_of(rel), state)
    return None if target is None else (found, target)


def resolve(
    found: Found, course: Course, chapter: Chapter | None, state: CourseState | None = None
) -> Target | None:
    if found.kind == "link":
        return _link(found.scheme, found.name.split(":", 1)[1], course, chapter)
    if found.kind == "apparatus":
        return _apparatus(found.name, course)
    if found.kind == "claim":
        return _claim(found.name, course, chapter, state)
    if found.kind == "code":
        return _code(found.name)
    if found.kind == "symbol":
        return _symbol(found.name, course, chapter)
    return None


def _split(rest: str, chapter: Chapter | None) -> tuple[str, str]:
    head, slash, tail = rest.partition("/")
    if slash:
        return head, tail
    return (chapter.id if chapter else ""), rest


def _link(scheme: str, rest: str, course: Course, chapter: Chapter | None) -> Target | None:
    if scheme == "apparatus":
        return _apparatus(rest, course)
    if scheme == "chapter":
        target = course.chapters.get(rest)
        if target is None:
            return None
        m = target.manifest
        return Target(target.manifest.loc("id"), f"**Chapter {m.id}: {m.title}**\n\n{m.thesis}")
    if scheme == "lesson":
        chapter_id, item_id = _split(rest, chapter)
        return _lesson(course.chapters.get(chapter_id), item_id)
    if scheme in ("fig", "prop"):
        chapter_id, number = _split(rest, chapter)
        owner = course.chapters.get(chapter_id)
        if owner is None or not number.isdigit():
            return None
        return _numbered(owner, scheme, int(number))
    if scheme == "eq":
        return _equation(rest, course, chapter)
    return None


def _apparatus(entry_id: str, course: Course) -> Target | None:
    entry = course.apparatus.get(entry_id)
    if entry is None:
        return None
    planned = " (planned)" if entry.status == "planned" else ""
    return Target(entry.loc("id"), f"**{entry.id} {entry.title}**{planned}\n\n{entry.summary}")


def _lesson(owner: Chapter | None, item_id: str) -> Target | None:
    if owner is None:
        return None
    lesson = owner.lessons.get(item_id)
    if lesson is not None:
        meta = lesson.meta
        return Target(
            Location(lesson.path), f"**{owner.id}/{item_id}: {meta.title}** ({meta.strand})"
        )
    for index, item in enumerate(owner.manifest.items):
        if item.planned == item_id:
            where = owner.manifest.loc("items", index, "planned")
            return Target(where, f"**{owner.id}/{item_id}: {item.title}** (planned, {item.strand})")
    return None


def _numbered(owner: Chapter, scheme: str, number: int) -> Target | None:
    if scheme == "fig":
        for index, figure in enumerate(owner.manifest.figures):
            if figure.number == number:
                where = owner.manifest.loc("figures", index)
                return Target(
                    where, f"**{owner.id} Fig. {number}: {figure.title}**\n\n{figure.caption}"
                )
        return None
    for index, prop in enumerate(owner.manifest.propositions):
        if prop.number == number:
            where = owner.manifest.loc("propositions", index)
            return Target(where, f"**{owner.id} Prop. {number}**: {prop.claim}")
    return None


def _equation(rest: str, course: Course, chapter: Chapter | None) -> Target | None:
    chapters = [chapter] if chapter else []
    chapters += [c for c in course.chapters.values() if c is not chapter]
    label = "{#eq:" + rest + "}"
    for owner in chapters:
        for lesson in owner.lessons.values():
            at = lesson.body.find(label)
            if at >= 0:
                display = lesson.body.rfind("$$", 0, lesson.body.rfind("$$", 0, at))
                shown_text = lesson.body[max(display, 0) : at].strip()
                return Target(lesson.body_loc(at), f"**eq:{rest}** in {lesson.ref}\n\n{shown_text}")
    return None


def _claim(
    claim_id: str, course: Course, chapter: Chapter | None, state: CourseState | None
) -> Target | None:
    for lesson in _lessons(course, chapter):
        for index, claim in enumerate(lesson.meta.claims):
            if claim.id == claim_id:
                body = claim.model_dump(by_alias=True, exclude_none=True, exclude={"id"})
                described = ", ".join(f"{k}: {v}" for k, v in body.items() if v not in ([], {}))
                return Target(
                    lesson.meta.loc("claims", index, "id"),
                    f"**claim {claim_id}** ({lesson.ref}): {_verdict(course, lesson, claim_id, state)}"
                    f"\n\n{described}",
                )
    return None


def _verdict(course: Course, lesson: Lesson, claim_id: str, state: CourseState | None) -> str:
    """What the last check made of the claim (formulas run on change, from cached verdicts): this
    session's check of its chapter, or the verdicts kept in the store for the lesson as it is."""
    from coursekit.rules._lesson_maths import checked, known_maths
    from coursekit.rules.base import Context

    found = checked(course, lesson.chapter_id)
    if found is None and state is not None:
        ctx = Context(course, state.project.config, state.store)
        maths = known_maths(ctx, lesson)
        found = [maths] if maths is not None else None
    if found is None:
        return "not verified in this session yet"
    for maths in found:
        if maths.lesson.path != lesson.path:
            continue
        for verdict in maths.verdicts:
            if verdict.subject == "claim" and verdict.key == claim_id:
                if verdict.status == "ok":
                    return "verified by sympy"
                return f"{verdict.status}: {verdict.message}"
    return "not verified"


def _lessons(course: Course, chapter: Chapter | None) -> Iterator[Lesson]:
    if chapter is not None:
        yield from chapter.lessons.values()
    for other in course.chapters.values():
        if other is not chapter:
            yield from other.lessons.values()


def _code(code: str) -> Target | None:
    from coursekit.rules import REGISTRY

    rule = REGISTRY.get(code)
    if rule is None:
        return None
    return Target(None, f"**{rule.code} {rule.name}** ({rule.severity})\n\n{rule.summary}")


def notation_tables(
    course: Course, chapter: Chapter | None
) -> Iterator[tuple[str, list[NotationEntry]]]:
    """The tables a chapter's maths sees, nearest first: its own, its apparatus, course.yaml."""
    if chapter is not None:
        yield f"chapter {chapter.id}", chapter.manifest.notation
        for link in chapter.manifest.apparatus:
            entry = course.apparatus.get(link.id)
            if entry is not None:
                yield f"apparatus {entry.id}", entry.notation
    if course.manifest is not None:
        yield "course.yaml", course.manifest.notation


def _shape_note(entry: NotationEntry) -> str:
    """The declared shape as `check`'s shape messages write it (T×d_k), with its axes."""
    if entry.rowwise:
        return "\n\napplied row by row: keeps a matrix's shape"
    if not entry.shape:
        return ""
    note = "\n\nshape " + "×".join(str(size) for size in entry.shape)
    if entry.axes:
        note += " (" + " × ".join(entry.axes) + ")"
    return note


def _symbol(symbol_key: str, course: Course, chapter: Chapter | None) -> Target | None:
    for owner, entries in notation_tables(course, chapter):
        for entry in entries:
            if declared_key(entry.symbol) == symbol_key:
                return Target(
                    entry.loc("symbol"),
                    f"**${shown(symbol_key)}$**: {entry.meaning}{_shape_note(entry)}\n\n"
                    f"declared in {owner} ({entry.source_path}:{entry.loc('symbol').line})",
                )
    return None
