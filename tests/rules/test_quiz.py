"""CK6xx: each rule fails on one small edit of the golden course, on the expected line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import LESSON, Case, assert_case

SECOND = "      - text: The length of the sentence.\n"

CASES = [
    Case("CK601", LESSON, [(LESSON, "    answer: 4\n", "")], "  - kind: numeric"),
    Case(
        "CK601",
        LESSON,
        [
            (
                LESSON,
                "  - kind: numeric\n",
                "  - kind: single\n    prompt: Pick one.\n    options: []\n  - kind: numeric\n",
            )
        ],
        "options: []",
    ),
    Case(
        "CK602",
        LESSON,
        [(LESSON, SECOND, SECOND + "        correct: true\n")],
        "The length of the sentence.",
    ),
    Case(
        "CK602",
        LESSON,
        [(LESSON, "        correct: true\n      - text: The length", "      - text: The length")],
        "The vector of the token",
    ),
    Case(
        "CK603",
        LESSON,
        [
            (
                LESSON,
                "      - text: It has $T$ positions.\n        correct: true\n",
                "      - text: It has $T$ positions.\n",
            )
        ],
        "It has $T$ positions.",
    ),
    Case("CK604", LESSON, [(LESSON, "    margin: 0\n", "")], "    answer: 4"),
    Case(
        "CK605",
        LESSON,
        [(LESSON, SECOND, SECOND + "      - text: ' The length of the sentence.'\n")],
        "' The length",
    ),
    Case("CK605", LESSON, [(LESSON, SECOND, "      - text: ''\n")], "- text: ''"),
    Case(
        "CK606",
        LESSON,
        [(LESSON, "with the questions below", "with the three questions below")],
        "three questions",
        at="three questions",
    ),
    Case(
        "CK606",
        LESSON,
        [(LESSON, "Test yourself", "Read the 1 paper below. Test yourself")],
        "1 paper",
        at="1 paper",
    ),
    Case(
        "CK607",
        LESSON,
        [(LESSON, "identifier: arXiv:1706.03762", "identifier: 1706.03762")],
        "identifier:",
    ),
    Case(
        "CK607",
        LESSON,
        [(LESSON, "identifier: arXiv:1706.03762", "identifier: doi 10.5555")],
        "identifier:",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c.id}" for i, c in enumerate(CASES)])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_single_choice_message_names_the_options(tmp_path: Path) -> None:
    diagnostics = assert_case(tmp_path, CASES[2])
    assert any("options 1, 2" in d.message for d in diagnostics if d.code == "CK602")
