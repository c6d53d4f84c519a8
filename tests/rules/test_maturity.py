"""CK7xx: a published chapter that owes fails, one diagnostic per deficit; a draft never does."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import CHAPTER, LESSON, Case, assert_case, copy_golden, edit, run_check

M1 = (CHAPTER, "maturity: M0", "maturity: M1")
LINK = "  - id: 0.LA.01\n    title: Vectors\nnotation:"

CASES = [
    Case("CK701", CHAPTER, [M1], "status: published"),
    Case("CK702", CHAPTER, [M1], "problems: [count-tokens]"),
    Case("CK703", CHAPTER, [M1], "problems: [count-tokens]"),
    Case("CK704", CHAPTER, [M1], "exercises: [first-token]"),
    Case(
        "CK705",
        CHAPTER,
        [(CHAPTER, LINK, LINK.replace("notation:", "  - id: 0.IT.02\nnotation:"))],
        "0.IT.02",
    ),
    Case(
        "CK706", LESSON, [(LESSON, "reading_time: 5\n", "reading_time: 5\nstatus: stub\n")], "stub"
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_one_diagnostic_per_deficit(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "maturity: M0", "maturity: M1")
    owed = sorted((d.code, d.message) for d in run_check(course) if d.code.startswith("CK7"))
    # M1 asks for basics 2 and concept 1 (strands), 2 problems, 2 variants, 2 exercises.
    assert [code for code, _ in owed] == ["CK701", "CK701", "CK702", "CK703", "CK704"]
    assert any("1/2 basics lessons, owes 1" in message for _, message in owed)


def test_a_draft_owes_without_failing(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "maturity: M0", "maturity: M1")
    edit(course / CHAPTER, "status: published", "status: draft")
    assert not [d for d in run_check(course) if d.severity == "error"]


def test_confirmation_hook_decides_whether_a_problem_counts(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    codes = {d.code for d in run_check(course, options={"problem_confirmed": lambda p: False})}
    assert {"CK702", "CK703"} <= codes


def test_a_problem_its_program_disagrees_with_does_not_count(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / "I/1-first-steps/problems/count-tokens/solution.py", "return 4", "return 5")
    codes = {d.code for d in run_check(course, options={"exec": True})}
    assert {"CK702", "CK703"} <= codes
