"""How one number the reader sees is accounted for: tied, given, or reported (and how)."""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction
from functools import partial

from coursekit.markdown.numbers import Found
from coursekit.model.tree import Lesson
from coursekit.records import record
from coursekit.rules._items import Item
from coursekit.rules._orders import OrderBook
from coursekit.rules._texts import Locator
from coursekit.verify.claims.numbers import Written, read_number, show

# How far an untied number may sit from a claim's value and still be a slip of that claim.
_NEAR = Fraction(1, 10)


@record
class ChapterFacts:
    """What the chapter's lessons state: claim values, givens, order claims, citations."""

    values: dict[str, Fraction] = field(default_factory=dict)
    givens: set[Fraction] = field(default_factory=set)
    orders: OrderBook = field(default_factory=OrderBook)
    cited: set[str] = field(default_factory=set)


@record(frozen=True)
class Source:
    """One text of the chapter: where its offsets are, and which file a fix may edit."""

    chapter: str
    locate: Locator
    path: str | None  # a lesson file (its body): `coursekit fix` may tie there
    lesson: Lesson | None  # a lesson body: its display equations are accounted for


def derived_looking(text: str) -> bool:
    """Thousands separators, a decimal point, or three significant digits or more."""
    if "," in text or "." in text:
        return True
    digits = "".join(char for char in text if char.isdigit())
    return len(digits.lstrip("0").rstrip("0")) >= 3 or not text.isdigit()


def judge_number(
    chapter: str, found: Found, locate: Locator, facts: ChapterFacts, value: Fraction | None = None
) -> Item | None:
    """How one number is accounted for; None for a small plain number nobody would derive."""
    where = partial(locate, found.start)
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
    # Arithmetic (`3 + 4`) looks like what it makes: a small result is no result to check.
    if not derived_looking(found.text if written is not None else show(value)):
        return None
    text = found.text
    near = _nearest(value, half, facts.values)
    if near is None:
        why = f"{text} looks derived but nothing checks it: tie it to a claim "
        why += f"([{text}]{{claim=ID}}) or list it under `given:` in the front matter"
        return Item(chapter, "numbers", "untied", where, text, "CK816", why)
    claim, claim_value, equal = near
    tag = f"[{show(claim_value)}]{{claim={claim}}}"
    if not equal:
        why = f"{text} is tied to no claim and looks like {claim} = {show(claim_value)}; "
        why += f"correct it, or tie it: {tag}"
        return Item(chapter, "numbers", "false", where, text, "CK814", why, claim)
    # A number ties where it is written; arithmetic ties the number it makes.
    fix = f"[{text}]{{claim={claim}}}" if written is not None else f"'{text}, which is {tag}'"
    why = f"{text} is the value of claim '{claim}' but is not tied to it: write {fix}"
    return Item(chapter, "numbers", "untied", where, text, "CK815", why, claim)


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
