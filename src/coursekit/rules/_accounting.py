"""The account of every number, display equation and order of growth a chapter shows.

One pass per chapter, shared by the CK814-CK822 rules (`coursekit.rules.numbers`), the
statistics and `coursekit fix`. Each item is *checked* (tied to a claim, or arithmetic evaluated
exactly), *given* (a value some claim's `where`, a quiz answer or the lesson's `given:` list
states; a display that defines a symbol), *untied*, *false* or *unreadable*. Structural: no
sympy, so a `--structural` check pays for it in milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache, partial

from coursekit.markdown import Scan, scan
from coursekit.markdown.numbers import Found, orders, prose_numbers
from coursekit.model.tree import Chapter, Course, ExerciseDoc, Lesson, Problem
from coursekit.rules._arithmetic import maths_items, prose_items
from coursekit.rules._displays import display_item
from coursekit.rules._items import Item
from coursekit.rules._numbers_judge import ChapterFacts, Source, judge_number
from coursekit.rules._orders import figure_orders, judge_order
from coursekit.rules._texts import chapter_texts, yaml_locator

_EQ_LABEL = re.compile(r"[ \t]*\{#eq:")
_LABELS = re.compile(r"\{#eq:([^}\s]*)\}")


def account(course: Course, chapters: Iterable[Chapter] | None = None) -> tuple[Item, ...]:
    """Every item of `chapters` (None: every chapter), in reading order (each chapter's
    computed once per run)."""
    chosen = course.chapters.values() if chapters is None else chapters
    return tuple(item for chapter in chosen for item in chapter_account(course, chapter))


def chapter_account(course: Course, chapter: Chapter) -> tuple[Item, ...]:
    """Every item of one chapter: what its own files show, against its own claims."""
    return course.derive_of(chapter.id, "accounting", lambda: tuple(_account(course, chapter)))


def _account(course: Course, chapter: Chapter) -> Iterator[Item]:
    facts = chapter_facts(course, chapter)
    for text in chapter_texts(course, chapter):
        if text.kind in ("figure", "statement"):
            continue  # figure_orders reads figures, with their ties; problems below
        lesson = text.lesson if text.kind == "body" else None
        path = lesson.path if lesson is not None else None
        source = Source(chapter.id, text.locate, path, lesson)
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
            source = Source(chapter.id, yaml_locator(course, meta, *path), None, None)
            yield from _text_items(source, value, posed)


_DECIMAL = re.compile(r"\d+(?:\.\d+)?")


def _numbers_in(value: object) -> Iterator[Fraction]:
    """Every number of a statement's text, or of a solution value (nested lists, mappings)."""
    if isinstance(value, str):
        for match in _DECIMAL.finditer(value.replace("{,}", "").replace(",", "")):
            yield _exact(match.group())
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
        return _exact(str(value).replace(",", ""))
    except (InvalidOperation, ValueError, OverflowError):  # .nan, .inf: no number to match
        return None


@lru_cache(maxsize=8192)
def _exact(digits: str) -> Fraction:
    """A decimal numeral's exact value (chapters repeat their `where` values: read each once)."""
    return Fraction(Decimal(digits))


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
        if "]{" in text.value:  # a tag's `]{`: most texts (quiz options, captions) hold none
            facts.cited.update(tag.value for tag in scan(text.value).tags if tag.key == "claim")
    return facts


# What a text must contain to hold a number, a display or an order: most quiz options do not.
_ACCOUNTABLE = re.compile(r"\d|\$\$|O\s*\(|Θ|Ω|\\Theta|\\Omega|\\mathcal")


def _text_items(source: Source, text: str, facts: ChapterFacts) -> Iterator[Item]:
    if _ACCOUNTABLE.search(text) is None:
        return
    scanned = scan(text)
    consumed: set[int] = set()
    shown: frozenset[str] | None = None  # the labels the text's displays carry, read once
    for maths in scanned.maths:
        if maths.display:
            if source.lesson is not None:
                latex = text[maths.start + 2 : maths.end - 2]
                where = partial(source.locate, maths.start)
                if _EQ_LABEL.match(scanned.masked, maths.end) is not None:
                    yield display_item(source.chapter, where, latex, labelled=True)
                    continue  # CK803 compares a labelled display with its formula
                if shown is None:
                    shown = frozenset(_LABELS.findall(scanned.masked))
                formulas = dict(source.lesson.meta.formulas)
                yield display_item(source.chapter, where, latex, False, formulas, shown)
        else:
            yield from maths_items(source, scanned, (maths.start, maths.end), facts, consumed)
    yield from prose_items(source, scanned, facts, consumed)
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
        yield judge_order(
            source.chapter, found, partial(source.locate, found.start), facts.orders, span
        )


def _tag_span(scanned: Scan, found: Found, path: str) -> tuple[str, int, int] | None:
    """What a tag would wrap: the order, or the maths that is only the order; None inside more."""
    for maths in scanned.maths:
        if maths.start <= found.start < maths.end:
            delimiter = 2 if maths.display else 1
            inner = scanned.text[maths.start + delimiter : maths.end - delimiter].strip()
            return None if maths.display or inner != found.text else (path, maths.start, maths.end)
    return (path, found.start, found.end)


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
