"""A rule's findings as the per-chapter cache keeps them (`coursekit.kept_rows`)."""

from __future__ import annotations

import json
import marshal
from typing import Any

import pytest

from coursekit import kept_rows
from coursekit.diagnostics import Diagnostic, Severity

FOUND = [
    Diagnostic("course/a.md", 3, 9, "CK817", "claim 'x' is cited nowhere", Severity.WARNING),
    Diagnostic(
        "course/b.yaml", 1, 1, "CK301", "no 'title'", Severity.ERROR, "missing", True, ("c.md",)
    ),
]


@pytest.mark.parametrize("through", ["marshal", "JSON"])
def test_what_is_kept_reads_back_as_the_same_findings(through: str) -> None:
    rows = kept_rows.encode(FOUND)
    if through == "marshal":
        again = marshal.loads(marshal.dumps(rows))
    else:
        again = json.loads(json.dumps(rows))
    decoded = kept_rows.decoded(again)
    assert decoded == FOUND
    assert decoded is not None and all(type(d.severity) is Severity for d in decoded)


@pytest.mark.parametrize("line", [3.0, "1", True], ids=["a float", "a string", "a bool"])
def test_a_row_of_other_types_is_converted_as_before(line: Any) -> None:
    """Rows of other types than `encode` writes (an older entry, a hand-made one) are read
    field by field, as they were before rows of the right types were taken as they are."""
    rows = kept_rows.encode(FOUND)
    rows[0] = [*rows[0]]
    rows[0][1] = line
    decoded = kept_rows.decoded(rows)
    assert decoded is not None
    assert decoded[0].line == int(line) and decoded[1:] == FOUND[1:]


@pytest.mark.parametrize(
    "damage",
    [
        lambda row: row[:8],  # a field short
        lambda row: [*row[:5], "fatal", *row[6:]],  # no such severity
        lambda row: [*row[:1], "three", *row[2:]],  # a line that is no number
        lambda row: [*row[:8], 5],  # related files that are not a list
        lambda row: {"path": row[0]},  # not a row at all
    ],
)
def test_anything_else_is_no_findings_known(damage: Any) -> None:
    rows = kept_rows.encode(FOUND)
    rows[1] = damage(rows[1])
    assert kept_rows.decoded(rows) is None
    assert kept_rows.decoded("rows") is None


def test_no_finding_is_one_shared_empty_list_both_ways() -> None:
    assert kept_rows.encode([]) is kept_rows.NO_ROWS
    assert kept_rows.decoded([]) == [] and kept_rows.decoded([]) is kept_rows.decoded([])
