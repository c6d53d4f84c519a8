"""A rule's findings as the per-chapter cache keeps them (`coursekit.kept_rows`)."""

from __future__ import annotations

import json
import marshal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# A chapter's entry for one set of options ----------------------------------------------------

CODES = ("CK301", "CK302", "CK817")


def _working() -> dict[str, Any]:
    rows = kept_rows.encode(FOUND)
    nothing = ["k1", kept_rows.NO_ROWS]
    return {kept_rows.EVERY: "every", "CK301": nothing, "CK302": nothing, "CK817": ["k2", rows]}


@pytest.mark.parametrize("through", ["marshal", "JSON"])
def test_a_whole_entry_reads_back_its_findings_and_each_rules_key(through: str) -> None:
    stored = kept_rows.as_stored(_working(), "shape", CODES)
    if through == "marshal":
        stored = marshal.loads(marshal.dumps(stored))
    else:
        stored = json.loads(json.dumps(stored))
    assert list(stored[kept_rows.ROWS]) == ["CK817"]  # what found nothing keeps no row
    assert kept_rows.whole(stored, "every", "shape") == FOUND
    pairs = kept_rows.pairs(stored)
    assert pairs == {code: pair for code, pair in _working().items() if code}


@pytest.mark.parametrize(
    ("every", "shape"), [("moved", "shape"), ("every", "other rules")], ids=["inputs", "rules"]
)
def test_an_entry_under_other_inputs_or_rules_is_not_whole(every: str, shape: str) -> None:
    stored = kept_rows.as_stored(_working(), "shape", CODES)
    assert kept_rows.whole(stored, every, shape) is None
    assert kept_rows.pairs(stored)["CK817"] == ["k2", kept_rows.encode(FOUND)]  # each key decides


def test_an_entry_missing_a_rules_row_is_never_whole() -> None:
    """A rule that crashed keeps no row: the entry is written without `SHAPE`, so the next
    run asks each rule's key, and runs the one missing."""
    working = _working()
    del working["CK302"]
    stored = kept_rows.as_stored(working, "shape", CODES)
    assert kept_rows.SHAPE not in stored
    assert kept_rows.whole(stored, "every", "shape") is None
    assert set(kept_rows.pairs(stored)) == {"CK301", "CK817"}


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: {**e, kept_rows.KEYS: "{not json"},
        lambda e: {**e, kept_rows.KEYS: '["k1"]'},
        lambda e: {**e, kept_rows.KEYS: '{"k1": "CK301"}'},
        lambda e: {**e, kept_rows.KEYS: 7},
        lambda e: {**e, kept_rows.ROWS: []},
        lambda e: {k: v for k, v in e.items() if k != kept_rows.KEYS},
        lambda e: [e],
    ],
    ids=["not JSON", "not a mapping", "codes not a list", "not text", "rows", "no keys", "list"],
)
def test_a_damaged_entry_is_neither_whole_nor_any_rules(damage: Any) -> None:
    """Each rule's key is then unknown, so every rule runs again; a whole entry's rows are
    still read without its keys, unless what `whole` reads is damaged too."""
    stored = damage(kept_rows.as_stored(_working(), "shape", CODES))
    assert kept_rows.pairs(stored) == {}
    keys_text = isinstance(stored, dict) and type(stored.get(kept_rows.KEYS)) is str
    rows = isinstance(stored, dict) and isinstance(stored[kept_rows.ROWS], dict)
    expected = FOUND if keys_text and rows else None
    assert kept_rows.whole(stored, "every", "shape") == expected


def test_a_stored_entry_and_nothing_kept_are_stored_as_they_are() -> None:
    stored = kept_rows.as_stored(_working(), "shape", CODES)
    assert kept_rows.as_stored(stored, "shape", CODES) is stored
    assert kept_rows.as_stored({}, "shape", CODES) == {}


# What a store could hand back: JSON's values, and the stored form's own field names as keys
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["every", "shape", "error"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [kept_rows.EVERY, kept_rows.SHAPE, kept_rows.KEYS, kept_rows.ROWS, "CK301"]
            )
            | st.text(max_size=4),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_VALUES, st.sampled_from(["{}", '{"k": ["CK301"]}', '{"k": "CK301"}', "[", None]))
def test_any_stored_value_reads_as_an_entry_or_as_nothing(value: Any, keys: Any) -> None:
    """Whatever the store holds for a chapter (a damaged or foreign entry), reading it never
    raises: it is whole (findings), each rule's [key, rows], or nothing known."""
    for entry in (value, {**value, kept_rows.KEYS: keys} if isinstance(value, dict) else value):
        found = kept_rows.whole(entry, "every", "shape")
        assert found is None or all(isinstance(d, Diagnostic) for d in found)
        for code, pair in kept_rows.pairs(entry).items():
            assert isinstance(code, str) and isinstance(pair[0], str) and len(pair) == 2
