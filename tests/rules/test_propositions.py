"""CK4xx: each rule fails on one small edit of the golden course, on the expected line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import CHAPTER, LESSON, PROBLEM, Case, assert_case, copy_golden, edit, run_check

TWO = (
    "propositions:\n  - number: 1\n",
    "propositions:\n  - number: 1\n    claim: A sequence is read one token at a time.\n"
    "    gloss: Order is data.\n  - number: {n}   # second\n",
)


def second(n: int) -> tuple[str, str, str]:
    return (CHAPTER, TWO[0], TWO[1].format(n=n))


GLOSS = (
    "    gloss: >-\n      Each position $t$ holds one vector $x_t$, and the\n"
    "      order of the positions is part of the data.\n"
)

CASES = [
    Case("CK401", CHAPTER, [second(1)], "# second"),
    Case("CK401", CHAPTER, [second(3)], "# second"),
    Case("CK402", CHAPTER, [(CHAPTER, GLOSS, "    gloss: ''\n")], "gloss: ''"),
    Case(
        "CK403",
        CHAPTER,
        [
            (
                CHAPTER,
                "thesis: A sequence is read one token",
                "thesis: A sequence is read two tokens",
            )
        ],
        "thesis:",
    ),
    Case(
        "CK404",
        LESSON,
        [(LESSON, "[Prop. 1](prop:1)", "[Prop. 3](prop:3)")],
        "As [Prop. 3]",
        at="prop:3",
    ),
    Case(
        "CK404",
        LESSON,
        [(LESSON, "we read it in order.", "we read it in order (II.2 Prop. 1).")],
        "II.2 Prop. 1",
        at="II.2 Prop. 1",
    ),
    Case(
        "CK404",
        CHAPTER,
        [(CHAPTER, "order of the positions is part", "order of the positions (Prop. 2) is part")],
        "(Prop. 2)",
        at="Prop. 2",
    ),
    Case("CK404", PROBLEM, [(PROBLEM, "supports: [1]", "supports: [1, 4]")], "supports:"),
    Case(
        "CK405",
        CHAPTER,
        [
            (LESSON, "As [Prop. 1](prop:1) says, we", "We"),
            (PROBLEM, "supports: [1]", "supports: []"),
        ],
        "  - number: 1",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_numbering_findings_are_fixable(tmp_path: Path) -> None:
    diagnostics = assert_case(tmp_path, CASES[0])
    assert all(d.fixable for d in diagnostics if d.code == "CK401")


def test_draft_needs_no_support(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "status: published", "status: draft")
    edit(course / PROBLEM, "supports: [1]", "supports: []")
    edit(course / LESSON, "As [Prop. 1](prop:1) says, we", "We")
    assert "CK405" not in {d.code for d in run_check(course)}


def test_thesis_compares_words_not_folding(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / CHAPTER,
        "thesis: A sequence is read one token at a time.",
        "thesis: >-\n  A sequence is read\n  one token at a time.",
    )
    assert "CK403" not in {d.code for d in run_check(course)}
