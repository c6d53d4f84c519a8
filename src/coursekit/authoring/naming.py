"""Names for new course parts: roman book ids, chapter numbers, apparatus ids, slugs, and the
neutral placeholder sentences `coursekit new` derives from a title. Pure functions of text.
"""

from __future__ import annotations

import re
import unicodedata

from coursekit.bounds import ref_number


class ScaffoldError(Exception):
    """Something `new` cannot do as asked (a usage problem: exit 2)."""


_ROMAN = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]
_AREA = re.compile(r"^[A-Z]{2,4}$")
_APPARATUS = re.compile(r"^0\.(?P<area>[A-Z]{2,4})\.(?P<nn>[0-9]{2})$")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


# Ids ----------------------------------------------------------------------------------------


def to_roman(number: int) -> str:
    if not 0 < number < 4000:
        raise ValueError(f"{number} has no Roman numeral here")
    out = []
    for value, letters in _ROMAN:
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)


def from_roman(text: str) -> int | None:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    if not text or any(ch not in values for ch in text):
        return None
    total = 0
    for index, ch in enumerate(text):
        value = values[ch]
        if index + 1 < len(text) and values[text[index + 1]] > value:
            total -= value
        else:
            total += value
    return total if total > 0 and to_roman(total) == text else None


def slugify(title: str, limit: int = 48) -> str:
    """'Self-attention: the sequence asks itself' -> 'self-attention-the-sequence-asks-itself'."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit and slug:
            break
        slug = candidate
    return slug[:limit].strip("-")


def next_book_id(listed: list[str]) -> str:
    numbers = [n for n in (from_roman(b) for b in listed) if n is not None]
    return to_roman(max(numbers, default=0) + 1)


def next_chapter_number(book_id: str, listed: list[str], folders: list[str]) -> int:
    used = [0]
    for chapter_id in listed:
        book, _, number = chapter_id.partition(".")
        if book == book_id and number.isdigit():
            used.append(ref_number(number) or 0)  # past a billion: no chapter's number
    for name in folders:
        head = name.split("-", 1)[0]
        if head.isdigit():
            used.append(ref_number(head) or 0)
    return max(used) + 1


def next_apparatus_id(area: str, existing: list[str]) -> str:
    numbers = [0]
    for entry in existing:
        match = _APPARATUS.match(entry)
        if match and match["area"] == area:
            numbers.append(int(match["nn"]))
    nxt = max(numbers) + 1
    if nxt > 99:
        raise ScaffoldError(f"area {area} has no apparatus number left after 0.{area}.99")
    return f"0.{area}.{nxt:02d}"


# Placeholders: neutral sentences, derived from the title, that say what is still to come. ----


def thesis_placeholder(title: str) -> str:
    return f"The central claim of the chapter on {_plain_title(title)} is to be stated in this one sentence."


def _plain_title(title: str) -> str:
    return title.strip().rstrip(".")
