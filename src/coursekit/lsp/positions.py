"""Between coursekit's places (1-based line, column in characters) and the editor's.

LSP counts columns in UTF-16 code units from 0: a `×` is one, an emoji two. Every conversion
goes through the line's text so a diagnostic lands under the character `check` names.
"""

from __future__ import annotations

import re

# What a diagnostic's range covers after its column: the value or word that starts there.
_TOKEN = re.compile(r"[^\s,\]\)\}\"'`]+")


def lines(text: str) -> list[str]:
    return text.split("\n")


def utf16_column(line: str, chars: int) -> int:
    """Characters into `line` -> UTF-16 units."""
    head = line[: max(0, chars)]
    return len(head) + sum(1 for c in head if ord(c) > 0xFFFF)


def char_column(line: str, units: int) -> int:
    """UTF-16 units into `line` -> characters (clamped to the line)."""
    count = 0
    for index, c in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(c) > 0xFFFF else 1
    return len(line)


def span(text: str | None, line: int, column: int) -> tuple[int, int, int, int]:
    """The 0-based (line, start, line, end) range, in UTF-16, of the token at a 1-based place.

    An empty or missing file, or a place past its end, gives an empty range at the place."""
    row = max(0, line - 1)
    all_lines = lines(text) if text is not None else []
    if row >= len(all_lines):
        return row, max(0, column - 1), row, max(0, column - 1)
    source = all_lines[row].rstrip("\r")
    start = min(max(0, column - 1), len(source))
    match = _TOKEN.match(source, start)
    end = match.end() if match else start
    if end == start and start == 0 and source.strip():
        end = len(source)  # a whole-file finding at 1:1 on a line that starts with a space
    return row, utf16_column(source, start), row, utf16_column(source, end)


def offset_at(text: str, line: int, units: int) -> int:
    """0-based line and UTF-16 column -> offset into `text` (clamped)."""
    all_lines = lines(text)
    if line >= len(all_lines):
        return len(text)
    before = sum(len(x) + 1 for x in all_lines[:line])
    return before + char_column(all_lines[line], units)


def position_of(text: str, offset: int) -> tuple[int, int]:
    """Offset into `text` -> 0-based line and UTF-16 column."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, utf16_column(text[start:], offset - start)
