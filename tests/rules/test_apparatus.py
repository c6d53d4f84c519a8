"""CK3xx: each rule fails on one small edit of the golden course, on the expected line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import BOOK0, CHAPTER, Case, assert_case

LINK = "  - id: 0.LA.01\n    title: Vectors\nnotation:"

CASES = [
    Case("CK301", CHAPTER, [(CHAPTER, "  - id: 0.LA.01\n", "  - id: 0.LA.09\n")], "0.LA.09"),
    Case("CK302", CHAPTER, [(CHAPTER, "  - id: 0.LA.01\n", "  - id: I.1\n")], "- id: I.1"),
    Case(
        "CK302",
        "I/book.yaml",
        [
            (
                "I/book.yaml",
                "chapters: [I.1]\n",
                "chapters: [I.1]\napparatus:\n  - {id: 0.LA.05, title: Norms, summary: Lengths.}\n",
            )
        ],
        "0.LA.05",
    ),
    Case(
        "CK303",
        CHAPTER,
        [(CHAPTER, "    title: Vectors\n", "    title: Vectors and matrices\n")],
        "Vectors and matrices",
    ),
    Case(
        "CK304",
        CHAPTER,
        [
            (
                CHAPTER,
                LINK,
                "  - id: 0.LA.01\n    title: Vectors\n  - id: 0.LA.01   # again\nnotation:",
            )
        ],
        "# again",
    ),
    Case(
        "CK305",
        CHAPTER,
        [
            (CHAPTER, "status: published", "status: draft"),
            (CHAPTER, LINK, LINK.replace("notation:", "  - id: 0.IT.02\nnotation:")),
        ],
        "0.IT.02",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_book0_is_not_flagged(tmp_path: Path) -> None:
    diagnostics = assert_case(
        tmp_path,
        Case(
            "CK303",
            CHAPTER,
            [(CHAPTER, "    title: Vectors\n", "    title: Vector\n")],
            "title: Vector",
        ),
    )
    assert not [d for d in diagnostics if d.path.endswith(BOOK0)]
