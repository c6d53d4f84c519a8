"""Where a finding ends: the token that starts at its line:col, read from the source text.

Diagnostics carry a start only; the machine-readable formats (JSON, SARIF) also give an end
so editors can underline the value. The end is exclusive (the column after the last
character), as in ruff's JSON and SARIF's `endColumn`: a quoted scalar runs to its closing
quote, a Markdown link `[text](target)` to its closing parenthesis, anything else up to the
next space or YAML flow delimiter. Without the source (or past its end) the span is empty.
"""

from __future__ import annotations

from collections.abc import Mapping

from coursekit.diagnostics import Diagnostic

_STOP = frozenset(" \t,]}#")


def _token_end(line: str, start: int) -> int:
    """The exclusive 0-based end of the token at `start` of `line`."""
    if start >= len(line):
        return start
    first = line[start]
    if first in "'\"":
        close = line.find(first, start + 1)
        return len(line) if close < 0 else close + 1
    if first == "[":
        middle = line.find("](", start)
        close = line.find(")", middle + 2) if middle >= 0 else -1
        if close >= 0:
            return close + 1
    end = start + 1
    while end < len(line) and line[end] not in _STOP:
        end += 1
    return end


def end_of(d: Diagnostic, sources: Mapping[str, str]) -> tuple[int, int]:
    """(end_line, end_column), 1-based with an exclusive column; the start when unknown."""
    text = sources.get(d.path)
    if text is None or d.line < 1:
        return d.line, d.column
    lines = text.split("\n")
    if d.line > len(lines):
        return d.line, d.column
    line = lines[d.line - 1].rstrip("\r")
    start = max(d.column, 1) - 1
    return d.line, _token_end(line, start) + 1
