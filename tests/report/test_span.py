"""End positions for JSON and SARIF: the token at a finding's start, end exclusive."""

from __future__ import annotations

import pytest

from coursekit.diagnostics import Diagnostic
from coursekit.report.span import end_of


@pytest.mark.parametrize(
    ("line", "column", "end"),
    [
        ("status: publishd", 9, 17),  # a plain scalar runs to the end of the line
        ("books: [I, II]", 9, 10),  # a flow item stops at the comma
        ("  - id: 0.IT.09  # planned", 9, 16),  # a comment is not part of the value
        ("title: 'A, b' # x", 8, 14),  # a quoted scalar runs to its closing quote
        ("See [order](lesson:I.1/ordr) here.", 5, 29),  # a Markdown link to its ')'
        ("short", 40, 40),  # past the end of the line: an empty span
    ],
)
def test_the_token_at_the_start_is_the_span(line: str, column: int, end: int) -> None:
    d = Diagnostic("a.yaml", 2, column, "CK104", "m")
    assert end_of(d, {"a.yaml": "first\n" + line + "\nlast"}) == (2, end)


def test_unknown_source_or_line_gives_the_start() -> None:
    d = Diagnostic("a.yaml", 9, 3, "CK104", "m")
    assert end_of(d, {}) == (9, 3)
    assert end_of(d, {"a.yaml": "one line"}) == (9, 3)
