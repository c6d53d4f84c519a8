"""The account of every number, display equation and order of growth a chapter shows.

One pass per chapter, shared by the CK814-CK822 rules (`coursekit.rules.numbers`), the
statistics and `coursekit fix`. Each item is *checked* (tied to a claim, or arithmetic evaluated
exactly), *given* (a value some claim's `where`, a quiz answer or the lesson's `given:` list
states; a display that defines a symbol), *untied*, *false* or *unreadable*. Structural: no
sympy, so a `--structural` check pays for it in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from coursekit.markdown import Scan, scan
from coursekit.markdown.numbers import Found, orders, prose_numbers
from coursekit.model.base import Location
from coursekit.model.tree import Chapter, Course, ExerciseDoc, Lesson, Problem
from coursekit.rules._displays import display_item
from coursekit.rules._items import Item
from coursekit.rules._orders import OrderBook, figure_orders, judge_order
from coursekit.rules._texts import Locator, chapter_texts, yaml_locator
from coursekit.verify.claims.numbers import Written, read_number, show
from coursekit.verify.exact import constant_value
from coursekit.verify.expr import FormulaError
from coursekit.verify.latex import parse_latex_sides

# How far an untied number may sit from a claim's value and still be a slip of that claim.
_NEAR = Fraction(1, 10)
# After inline arithmetic: "..., which is 26,214,400", "= 26,214,400", "or about 10".
_PAIRED = re.compile(
    r"[ \t\n]*,?[ \t\n]*(?:(?:which|that)[ \t\n]+(?:is|makes|gives|comes[ \t\n]+to)|i\.e\.,?|"
    r"or|is|equals|gives|makes|=|≈)?[ \t\n]*(?:about[ \t\n]+|roughly[ \t\n]+)?\[?"
    r"(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![\w.]\d)"
)
_DIGIT = re.compile(r"\d")
_SideValue = tuple[Fraction | None, str, bool, bool]  # value, LaTeX, has symbols, after an ≈
_EQ_LABEL = re.compile(r"[ \t]*\{#eq:")
_LABELS = re.compile(r"\{#eq:([^}\s]*)\}")
_TRAILING_RELATION = re.compile(r"(?:\\approx|=|\\simeq)\s*[.,;]?\s*$")


@dataclass
class ChapterFacts:
    """What the chapter's lessons state: claim values, givens, order claims, citations."""

    values: dict[str, Fraction] = field(default_factory=dict)
    givens: set[Fraction] = field(default_factory=set)
    orders: OrderBook = field(default_factory=OrderBook)
    cited: set[str] = field(default_factory=set)


def account(course: Course) -> tuple[Item, ...]:
    """Every item of every chapter, in reading order (computed once per run)."""
    return course.derive("accounting", lambda: tuple(_account(course)))


def _account(course: Course) -> Iterator[Item]:
    for chapter in course.chapters.values():
        facts = chapter_facts(course, chapter)
        for text in chapter_texts(course, chapter):
            if text.kind in ("figure", "statement"):
                continue  # figure_orders reads figures, with their ties; problems below
            lesson = text.lesson if text.kind == "body" else None
            path = lesson.path if lesson is not None else None
            source = _Source(chapter.id, text.locate, path, lesson)
            yield from _text_items(source, text.value, facts)
        yield from _posed_items(course, chapter, facts)
        yield from figure_orders(course, chapter, facts.orders, facts.cited)
        yield from _uncited(chapter, facts)


def _posed_items(course: Course, chapter: Chapter, facts: ChapterFacts) -> Iterator[Item]:
    """A worked problem's or exercise's texts: its statement poses numbers (they are givens of
    the problem) and its program confirms `solution.value` (a number equal to it is given too).
    """
    docs: list[Problem | ExerciseDoc] = [*chapter.problems.values(), *chapter.exercises.values()]
    for doc in docs:
        meta = doc.meta
        posed = ChapterFacts(facts.values, set(facts.givens), facts.orders, facts.cited)
        posed.givens.update(_numbers_in(meta.statement))
        posed.givens.update(_numbers_in(meta.solution.value))
        texts = [("statement", meta.statement)]
        if meta.solution.text:
            texts.append(("solution", meta.solution.text))
        for key, value in texts:
            path = (key,) if key == "statement" else ("solution", "text")
            source = _Source(chapter.id, yaml_locator(course, meta, *path), None, None)
            yield from _text_items(source, value, posed)


def _numbers_in(value: object) -> Iterator[Fraction]:
    """Every number of a statement's text, or of a solution value (nested lists, mappings)."""
    if isinstance(value, str):
        for match in re.finditer(r"\d+(?:\.\d+)?", value.replace("{,}", "").replace(",", "")):
            yield Fraction(Decimal(match.group()))
    elif isinstance(value, list | tuple):
        for entry in value:
            yield from _numbers_in(entry)
    elif isinstance(value, dict):
        for entry in value.values():
            yield from _numbers_in(entry)
    elif (number := _number(value)) is not None:
        yield number


def _lessons(chapter: Chapter) -> Iterator[Lesson]:
    for item in chapter.manifest.items:
        lesson = chapter.lessons.get(item.id) if item.lesson is not None else None
        if lesson is not None:
            yield lesson


def _number(value: object) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return Fraction(Decimal(str(value).replace(",", "")))
    except (InvalidOperation, ValueError):
        return None


def chapter_facts(course: Course, chapter: Chapter) -> ChapterFacts:
    facts = ChapterFacts()
    for lesson in _lessons(chapter):
        meta = lesson.meta
        for claim in meta.claims:
            facts.givens.update(v for v in map(_number, claim.where.values()) if v is not None)
            if claim.kind == "value" and (value := _number(claim.value)) is not None:
                facts.values[claim.id] = value
            elif claim.kind == "solve" and len(claim.solutions) == 1:
                if (value := _number(claim.solutions[0])) is not None:
                    facts.values[claim.id] = value
            elif claim.kind == "order" and claim.order:
                facts.orders.add(claim.id, claim.order, lesson.ref)
        for question in meta.quiz:
            if question.claim:
                facts.cited.add(question.claim)
            if (answer := _number(question.answer)) is not None:
                facts.givens.add(answer)
        facts.givens.update(v for v in map(_number, meta.given) if v is not None)
    for text in chapter_texts(course, chapter):
        facts.cited.update(tag.value for tag in scan(text.value).tags if tag.key == "claim")
    return facts


def derived_looking(text: str) -> bool:
    """Thousands separators, a decimal point, or three significant digits or more."""
    if "," in text or "." in text:
        return True
    return len(text.lstrip("0").rstrip("0")) >= 3


@dataclass(frozen=True)
class _Source:
    """One text of the chapter: where its offsets are, and which file a fix may edit."""

    chapter: str
    locate: Locator
    path: str | None  # a lesson file (its body): `coursekit fix` may tie there
    lesson: Lesson | None  # a lesson body: its display equations are accounted for


def _text_items(source: _Source, text: str, facts: ChapterFacts) -> Iterator[Item]:
    scanned = scan(text)
    consumed: set[int] = set()
    for maths in scanned.maths:
        if maths.display:
            if source.lesson is not None:
                latex = text[maths.start + 2 : maths.end - 2]
                labelled = _EQ_LABEL.match(scanned.masked, maths.end) is not None
                shown = frozenset(_LABELS.findall(scanned.masked))
                formulas = dict(source.lesson.meta.formulas)
                where = source.locate(maths.start)
                yield display_item(source.chapter, where, latex, labelled, formulas, shown)
        else:
            yield from _maths_items(source, scanned, (maths.start, maths.end), facts, consumed)
    for found in prose_numbers(scanned):
        if found.start in consumed:
            continue
        item = judge_number(source.chapter, found, source.locate, facts)
        if item is not None and item.code == "CK815" and source.path is not None:
            item = replace(item, span=(source.path, found.start, found.end))
        if item is not None:
            yield item
    for found in orders(scanned):
        span = _tag_span(scanned, found, source.path) if source.path is not None else None
        yield judge_order(source.chapter, found, source.locate(found.start), facts.orders, span)


def _tag_span(scanned: Scan, found: Found, path: str) -> tuple[str, int, int] | None:
    """What a tag would wrap: the order, or the maths that is only the order; None inside more."""
    for maths in scanned.maths:
        if maths.start <= found.start < maths.end:
            delimiter = 2 if maths.display else 1
            inner = scanned.text[maths.start + delimiter : maths.end - delimiter].strip()
            return None if maths.display or inner != found.text else (path, maths.start, maths.end)
    return (path, found.start, found.end)


def judge_number(
    chapter: str, found: Found, locate: Locator, facts: ChapterFacts, value: Fraction | None = None
) -> Item | None:
    """How one number is accounted for; None for a small plain number nobody would derive."""
    where = locate(found.start)
    if found.claim is not None:
        return Item(chapter, "numbers", "checked", where, found.text, claim=found.claim)
    written: Written | None = None
    if value is None:
        try:
            written = read_number(found.text)
        except ValueError:
            return Item(chapter, "numbers", "unreadable", where, found.text)
        value = written.value
    half = written.half_ulp if written is not None else Fraction(0)
    if value in facts.givens:
        return Item(chapter, "numbers", "given", where, found.text)
    if not derived_looking(found.text):
        return None
    near = _nearest(value, half, facts.values)
    if near is not None:
        claim, claim_value, equal = near
        shown = f"{claim} = {show(claim_value)}"
        if equal:
            return Item(
                chapter,
                "numbers",
                "untied",
                where,
                found.text,
                "CK815",
                f"{found.text} is the value of claim '{claim}' but is not tied to it: "
                f"write [{found.text}]{{claim={claim}}} (coursekit fix does)",
                claim,
            )
        return Item(
            chapter,
            "numbers",
            "false",
            where,
            found.text,
            "CK814",
            f"{found.text} is tied to no claim and looks like {shown}; "
            f"correct it, or tie it: [{show(claim_value)}]{{claim={claim}}}",
            claim,
        )
    return Item(
        chapter,
        "numbers",
        "untied",
        where,
        found.text,
        "CK816",
        f"{found.text} looks derived but nothing checks it: tie it to a claim "
        f"([{found.text}]{{claim=ID}}) or list it under `given:` in the front matter",
    )


def _nearest(
    value: Fraction, half: Fraction, values: dict[str, Fraction]
) -> tuple[str, Fraction, bool] | None:
    best: tuple[str, Fraction, bool] | None = None
    best_gap: Fraction | None = None
    for claim, claim_value in values.items():
        gap = abs(value - claim_value)
        if gap <= half:
            return claim, claim_value, True
        if (
            claim_value != 0
            and gap <= _NEAR * abs(claim_value)
            and (best_gap is None or gap < best_gap)
        ):
            best, best_gap = (claim, claim_value, False), gap
    return best


def _read_inline(latex: str) -> list[_SideValue] | None:
    """The sides of inline maths with their exact values (None for a side with symbols)."""
    sides: list[_SideValue] = []
    for index, chunk in enumerate(re.split(r"\\approx|\\simeq", latex)):
        try:
            parsed = parse_latex_sides(chunk)
        except FormulaError:
            return None  # not arithmetic this family reads (notation reports unreadable maths)
        for number, side in enumerate(parsed):
            if side.node is not None:
                value = constant_value(side.node)
                sides.append((value, side.source.strip(), value is None, index > 0 and number == 0))
    return sides


def _maths_items(
    source: _Source,
    scanned: Scan,
    bounds: tuple[int, int],
    facts: ChapterFacts,
    consumed: set[int],
) -> Iterator[Item]:
    start, end = bounds
    latex = scanned.text[start + 1 : end - 1]
    if not _DIGIT.search(latex):
        return  # no number to account for (most inline maths: `$h_t$`, `$QK^\top$`)
    trailing = _TRAILING_RELATION.search(latex)
    sides = _read_inline(latex[: trailing.start()] if trailing else latex)
    if not sides:
        return
    where = source.locate(start)
    constants = [s for s in sides if not s[2]]
    if len(constants) >= 2 and len(constants) == len(sides):
        yield _equation(source.chapter, where, latex, constants)
        return
    value, written, _named, _ = sides[-1]
    if value is None or (
        len(sides) == 1 and not (_is_operation(written) or derived_looking(written))
    ):
        return  # maths in symbols, or a lone small number
    paired = _PAIRED.match(scanned.prose, end) if len(sides) == 1 else None
    if paired is not None and _is_operation(written):
        if _claim_tag_at(scanned, paired.start("number")):
            consumed.add(paired.start("number"))  # its tag checks it; counted once
        shown = (None, paired.group("number"), False, trailing is not None)
        yield _equation(source.chapter, where, latex, [sides[0], shown])
        return
    item = judge_number(
        source.chapter, Found(written, start, end, None), source.locate, facts, value
    )
    if item is not None:
        yield item


def _claim_tag_at(scanned: Scan, offset: int) -> bool:
    return any(t.key == "claim" and t.offset == offset for t in scanned.tags)


def _is_operation(source: str) -> bool:
    return bool(re.search(r"[-+*/^]|\\cdot|\\times|\\frac|\\div|\\sqrt", source))


def _equation(chapter: str, where: Location, latex: str, sides: list[_SideValue]) -> Item:
    """Arithmetic the text asserts: each side equal to the first (to the digits an `≈` shows)."""
    first = sides[0][0]
    assert first is not None
    for value, source, _named, approx in sides[1:]:
        try:
            written = read_number(source) if value is None else None
        except ValueError:
            return Item(chapter, "numbers", "unreadable", where, latex)
        shown = written.value if written is not None else value
        assert shown is not None
        tolerance = written.half_ulp if written is not None and approx else Fraction(0)
        if written is not None and not approx and written.half_ulp < 1:
            tolerance = Fraction(0)
        if abs(shown - first) > tolerance:
            return Item(
                chapter,
                "numbers",
                "false",
                where,
                latex,
                "CK818",
                f"{sides[0][1]} is {show(first)}, not {source}",
            )
    return Item(chapter, "numbers", "checked", where, latex)


def _uncited(chapter: Chapter, facts: ChapterFacts) -> Iterator[Item]:
    for lesson in _lessons(chapter):
        for index, claim in enumerate(lesson.meta.claims):
            if claim.kind in ("value", "order") and claim.id not in facts.cited:
                yield Item(
                    chapter.id,
                    "claims",
                    "untied",
                    lesson.meta.loc("claims", index, "id"),
                    claim.id,
                    "CK817",
                    f"claim '{claim.id}' is cited nowhere: no tag, figure or question's answer shows "
                    f"its {'number' if claim.kind == 'value' else 'order'} to the reader",
                )
