"""The numbers and orders of growth a reader sees in a Markdown text, as offsets into it.

Read from the one scan (`coursekit.markdown.scan`), so code, comments and front matter hold
none. What is never a number to check is left out here, once, for every rule:

* years (a plain four-digit number from 1500 to 2100) and ids: a number glued to a letter
  (`x86`, `fp16`, `h_1`), one after a dot (`II.2`, `0.IT.01`), or after a word that names a
  thing by number (`Chapter 4`, `Fig. 2`, `Prop. 1`, `Table 1`, `§4`, `step 3`);
* list numbers (`1.` opening a list item), a heading's own numbering (`## 2.1 The grid`);
* link texts and targets (`[Fig. 2](fig:2)`), and quoted titles (`"Attention Is All You Need"`).

A number inside a claim tag (`[26,214,400]{claim=rec-t50}`) carries the tag's claim. Maths is
read by the caller (it needs the LaTeX reader): `maths` lists the inline spans with their text.
"""

from __future__ import annotations

import re

from coursekit.markdown import Scan
from coursekit.records import record

# The first digit comes first and the look-behind after it, so the regex engine skips to digits
# (a leading look-behind would be tried at every offset of every text).
_NUMBER = re.compile(r"\d(?<![\w.,\\/^_{-]\d)(?:\d{0,2}(?:,\d{3})+|\d*)(?:\.\d+)?(?![\w]|[.,]\d)")
# Words that name a thing by its number: "Chapter 4", "Fig. 2", "§4", "step 3".
_ID_WORDS = frozenset(
    [
        "chapter",
        "chapters",
        "book",
        "books",
        "prop",
        "props",
        "proposition",
        "propositions",
        "fig",
        "figs",
        "figure",
        "figures",
        "table",
        "tables",
        "section",
        "sections",
        "lesson",
        "lessons",
        "eq",
        "eqs",
        "equation",
        "equations",
        "part",
        "parts",
        "step",
        "steps",
        "exercise",
        "exercises",
        "problem",
        "problems",
        "appendix",
        "theorem",
        "theorems",
        "lemma",
        "lemmas",
        "algorithm",
        "algorithms",
        "line",
        "lines",
        "page",
        "pages",
        "p",
        "pp",
        "version",
        "v",
        "no",
        "layer",
    ]
)
_LIST_OR_HEADING = re.compile(r"^[ \t>]*(?:\d{1,9}[.)](?=[ \t]|$)|#{1,6}[ \t]+(?:[\d.]+[ \t]+)?)")
_QUOTED = re.compile(r"\"[^\"\n]{1,300}\"|\u201c[^\u201d\n]{1,300}\u201d")
# Every alternative opens with a literal (the look-behind of `O` follows it), so the regex
# engine skips to the few offsets where a marker can begin.
_ORDER = re.compile(
    r"(?:\\mathcal\s*\{\s*O\s*\}|\\mathcal\s+O|\\Theta|\\Omega|Θ|Ω|O(?<![\w\\]O))\s*"
    r"(?=\\left\s*\(|\()"  # only where an argument opens: most capital Os begin words
)


def _may_hold_order(text: str) -> bool:
    """Whether any marker of `_ORDER` can occur: substring tests are far cheaper than a search."""
    return "O" in text or "Θ" in text or "Ω" in text or "\\Theta" in text


_OPEN = re.compile(r"\\left\s*\(|\(")
_MAX_ORDER = 200


@record(frozen=True, slots=True)
class Found:
    """A number or an order as written; `claim` is the claim of the tag around it, if any."""

    text: str
    start: int
    end: int
    claim: str | None = None


def _claim_at(scanned: Scan, start: int, end: int) -> str | None:
    for tag in scanned.tags:
        if tag.key == "claim" and tag.offset <= start and end <= tag.offset + len(tag.text):
            return tag.value
    return None


def _skipped_spans(scanned: Scan) -> list[tuple[int, int]]:
    spans = [link.span for link in scanned.links]
    spans += [(m.start(), m.end()) for m in _QUOTED.finditer(scanned.prose)]
    return spans


def prose_numbers(scanned: Scan) -> list[Found]:
    """Numbers in the prose (maths excluded) that a reader could take for a result."""
    prose = scanned.prose
    matches = list(_NUMBER.finditer(prose))
    if not matches:
        return []
    skipped = _skipped_spans(scanned)
    found: list[Found] = []
    for match in matches:
        start, end = match.span()
        text = match.group()
        if skipped and any(a <= start < b for a, b in skipped):
            continue
        if _is_id_or_year(prose, start, text):
            continue
        found.append(Found(text, start, end, _claim_at(scanned, start, end)))
    return found


def _is_id_or_year(prose: str, start: int, text: str) -> bool:
    if len(text) == 4 and text.isdigit() and 1500 <= int(text) <= 2100:
        return True
    line_start = prose.rfind("\n", 0, start) + 1
    before = prose[line_start:start]
    head = _LIST_OR_HEADING.match(prose, line_start)
    if head is not None and start < head.end():
        return True
    tail = before[-24:].rstrip()
    if tail.endswith("§"):
        return True
    words = tail.split()
    return bool(words) and words[-1].rstrip(".").lower() in _ID_WORDS


def orders(scanned: Scan) -> list[Found]:
    """Orders of growth, `O(...)`, `Θ(...)`, `\\Theta(...)`, `\\mathcal{O}(...)`, in prose or maths.

    `text` is the whole order as written (`O(T d^2)`), `start`/`end` its span in the text.
    """
    masked = scanned.masked
    if "(" not in masked or not _may_hold_order(masked):
        return []
    found: list[Found] = []
    index = 0
    while True:
        match = _ORDER.search(masked, index)
        if match is None:
            return found
        index = match.end()
        opener = _OPEN.match(masked, match.end())
        if opener is None:
            continue
        close = _closing(masked, opener.end())
        if close is None:
            continue
        start, end = match.start(), close + 1
        found.append(Found(masked[start:end], start, end, _claim_at(scanned, start, end)))
        index = end


def is_order(text: str) -> bool:
    """Whether a tag's text is an order of growth (`O(T^2 d)`, `$\\Theta(T)$`), not a number."""
    match = _ORDER.search(text)
    return match is not None and _OPEN.match(text, match.end()) is not None


def order_argument(text: str) -> str:
    """The argument of an order as written: `T d^2` of `O(T d^2)`, `\\log T` of `Θ(\\log T)`."""
    opener = _OPEN.search(text)
    if opener is None:
        return text
    inner = text[opener.end() : len(text) - 1]
    return re.sub(r"\\right\s*$", "", inner).strip()


def _closing(text: str, start: int) -> int | None:
    depth = 1
    stop = min(len(text), start + _MAX_ORDER)
    for index in range(start, stop):
        char = text[index]
        if char == "\n" and text.startswith("\n", index + 1):
            return None  # a paragraph ended first
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    return None
