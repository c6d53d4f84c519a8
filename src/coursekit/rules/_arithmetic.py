"""Arithmetic the text asserts, evaluated with exact fractions: inline maths (`$2\\cdot 50 = 100$`,
`$2 \\cdot 50 \\cdot 512^2$, which is 26,214,400`) and prose (`2 × 50 × 512² = 26,214,400`).
Never `eval`: the LaTeX reader builds a tree and `verify.exact` folds its constants.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from functools import partial

from coursekit.markdown import Scan
from coursekit.markdown.numbers import Found
from coursekit.memo import per_text
from coursekit.rules._items import Item, Where
from coursekit.rules._numbers_judge import ChapterFacts, Source, derived_looking, judge_number
from coursekit.verify.claims.numbers import read_number, show
from coursekit.verify.exact import constant_value
from coursekit.verify.expr import FormulaError
from coursekit.verify.latex import parse_latex_sides

# After inline arithmetic: "..., which is 26,214,400", "= 26,214,400", "or about 10".
_PAIRED = re.compile(
    r"[ \t\n]*,?[ \t\n]*(?:(?:which|that)[ \t\n]+(?:is|makes|gives|comes[ \t\n]+to)|i\.e\.,?|"
    r"or|is|equals|gives|makes|=|≈)?[ \t\n]*(?:about[ \t\n]+|roughly[ \t\n]+)?\[?"
    r"(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![\w.]\d)"
)
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")
_OPERATION = re.compile(r"[-+*/^]|\\cdot|\\times|\\frac|\\div|\\sqrt")
_DIGITS = re.compile(r"\d+")
_SideValue = tuple[Fraction | None, str, bool, bool]  # value, LaTeX, has symbols, after an ≈
_TRAILING_RELATION = re.compile(r"(?:\\approx|=|\\simeq)\s*[.,;]?\s*$")


# Arithmetic macros: what is left once they are gone is numbers and operators, or symbols.
_ARITHMETIC_MACROS = re.compile(
    r"\\(?:cdot|times|div|[dt]?frac|sqrt|approx|simeq|left|right|quad|qquad|[,;:!])"
)
# `T = 50`, `1/T = 0.125`: maths that ends by giving a number.
_ENDS_IN_NUMBER = re.compile(r"=\s*-?[\d{},.\s]+\\?[.,;]?\s*$")


def _holds_a_number(latex: str) -> bool:
    """Whether inline maths may show a value: arithmetic of numbers, or a side that is one.

    Decided by two searches before the LaTeX reader runs, since most inline maths names
    symbols (`$h_t$`, `$T^2 d$`) and holds no number a reader would take for a result.
    """
    if not _DIGIT.search(latex):
        return False
    if not _LETTER.search(_ARITHMETIC_MACROS.sub(" ", latex)):
        return True
    return _ENDS_IN_NUMBER.search(latex) is not None


@per_text(8192)
def _read_inline(latex: str) -> tuple[_SideValue, ...] | None:
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
    return tuple(sides)


def maths_items(
    source: Source,
    scanned: Scan,
    bounds: tuple[int, int],
    facts: ChapterFacts,
    consumed: set[int],
) -> Iterator[Item]:
    start, end = bounds
    latex = scanned.text[start + 1 : end - 1]
    if not _holds_a_number(latex):
        return  # no number a reader reads as a value (most inline maths: `$h_t$`, `$T^2 d$`)
    trailing = _TRAILING_RELATION.search(latex)
    sides = _read_inline(latex[: trailing.start()] if trailing else latex)
    if not sides:
        return
    where = partial(source.locate, start)
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
    return _OPERATION.search(source) is not None


def _equation(chapter: str, where: Where, latex: str, sides: list[_SideValue]) -> Item:
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


_PROSE_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\^\d+)?"
_PROSE_ARITHMETIC = re.compile(
    rf"(?<![\w.,/^-]){_PROSE_NUMBER}(?:[ \t]*[·×*+−][ \t]*{_PROSE_NUMBER})+(?![\w.,]\d|\w)"
)
_PROSE_EQUALS = re.compile(rf"[ \t]*(?P<rel>=|≈)[ \t]*(?P<number>{_PROSE_NUMBER})(?![\w]|[.,]\d)")
_OPERATORS = "·×*+−"
_MAYBE_ARITHMETIC = re.compile(rf"[\d⁰¹²³⁴⁵⁶⁷⁸⁹][ \t]*[{_OPERATORS}][ \t]*\d")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _prose_latex(text: str) -> str:
    """`2 × 50 × 512²` as the LaTeX reader reads it: `2 \\cdot 50 \\cdot 512^{2}`."""
    text = re.sub(
        r"([⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "^{" + m.group(1).translate(_SUPERSCRIPTS) + "}", text
    )
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    return text.replace("·", r" \cdot ").replace("×", r" \cdot ").replace("−", "-")


def prose_items(
    source: Source, scanned: Scan, facts: ChapterFacts, consumed: set[int]
) -> Iterator[Item]:
    """Arithmetic written in the prose: `2 × 50 × 512² = 26,214,400`, or `..., which is N`.

    Its numbers are part of the arithmetic (counted once, as it); its value is checked against
    the number it is said to make, or else judged as a number of its own.
    """
    prose = scanned.prose
    if not any(operator in prose for operator in _OPERATORS):
        return  # substring tests first: most texts hold none of the operators
    if _MAYBE_ARITHMETIC.search(prose) is None:
        return  # most texts: no two numbers joined by an operator, so no full search
    for match in _PROSE_ARITHMETIC.finditer(prose):
        written = match.group()
        try:
            (side,) = parse_latex_sides(_prose_latex(written))
        except (FormulaError, ValueError):
            continue
        value = constant_value(side.node) if side.node is not None else None
        if value is None:
            continue
        consumed.update(m.start() + match.start() for m in _DIGITS.finditer(written))
        start, end = match.span()
        where = partial(source.locate, start)
        equals = _PROSE_EQUALS.match(prose, end) or _PAIRED.match(prose, end)
        if equals is not None:
            number = equals.group("number")
            if _claim_tag_at(scanned, equals.start("number")) or "rel" in equals.groupdict():
                consumed.add(equals.start("number"))
            approx = equals.groupdict().get("rel") == "≈"
            yield _equation(
                source.chapter,
                where,
                written,
                [(value, written, False, False), (None, number, False, approx)],
            )
            continue
        item = judge_number(
            source.chapter, Found(written, start, end, None), source.locate, facts, value
        )
        if item is not None:
            yield item
