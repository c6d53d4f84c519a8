"""CK5xx: each rule fails on one small edit of the golden course, on the expected line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import BOOK0, CHAPTER, LESSON, Case, assert_case, copy_golden, edit, run_check

CASES = [
    Case(
        "CK501",
        LESSON,
        [(LESSON, "lesson:I.1/order", "lesson:I.1/orders")],
        "lesson:I.1/orders",
        at="lesson:",
    ),
    Case(
        "CK501",
        LESSON,
        [(LESSON, "lesson:I.1/order", "lesson:II.7/order")],
        "lesson:II.7/order",
        at="lesson:",
    ),
    Case(
        "CK502", LESSON, [(LESSON, "chapter:I.1", "chapter:I.9")], "chapter:I.9", at="chapter:I.9"
    ),
    Case("CK503", LESSON, [(LESSON, "(fig:1)", "(fig:2)")], "(fig:2)", at="fig:2"),
    Case("CK503", LESSON, [(LESSON, "(fig:1)", "(fig:I.1/4)")], "(fig:I.1/4)", at="fig:"),
    Case(
        "CK504",
        LESSON,
        [(LESSON, "apparatus:0.LA.01", "apparatus:0.LA.1")],
        "apparatus:0.LA.1",
        at="apparatus:",
    ),
    Case("CK505", LESSON, [(LESSON, "(fig:1)", "(figure:1)")], "(figure:1)", at="figure:1"),
    Case(
        "CK506",
        CHAPTER,
        [(CHAPTER, "  - number: 1\n    title: A row", "  - number: 2\n    title: A row")],
        "  - number: 2",
    ),
    Case(
        "CK507",
        CHAPTER,
        [
            (CHAPTER, "    alt: Four boxes in a row, labelled $x_1$ to $x_4$.\n", ""),
            (CHAPTER, "  - number: 1\n    title: A row", "  - number: 1  # fig\n    title: A row"),
        ],
        "# fig",
    ),
    Case(
        "CK507",
        CHAPTER,
        [(CHAPTER, "alt: Four boxes in a row, labelled $x_1$ to $x_4$.", "alt: '  '")],
        "alt: '  '",
    ),
    Case(
        "CK508",
        CHAPTER,
        [(CHAPTER, "asset: figures/tokens.svg", "asset: figures/token.svg")],
        "asset:",
    ),
    Case(
        "CK508",
        CHAPTER,
        [(CHAPTER, "asset: figures/tokens.svg", "asset: ../../course.yaml")],
        "asset:",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_did_you_mean(tmp_path: Path) -> None:
    diagnostics = assert_case(tmp_path, CASES[0])
    assert any("did you mean 'order'" in d.message for d in diagnostics if d.code == "CK501")


def test_figure_renumbering_is_fixable(tmp_path: Path) -> None:
    diagnostics = assert_case(tmp_path, CASES[7])
    assert all(d.fixable for d in diagnostics if d.code == "CK506")


def test_web_and_relative_links_are_left_alone(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / LESSON,
        "Test yourself",
        "See [the paper](https://arxiv.org/abs/1706.03762), [notes](notes.md) and "
        "`[code](xyz:1)`.\n\nTest yourself",
    )
    assert not [d for d in run_check(course) if d.code.startswith("CK5")]


def test_naming_a_file_narrows_the_report_but_sees_the_whole_tree(tmp_path: Path) -> None:
    # Renaming the planned item in chapter.yaml breaks the lesson's link to it: naming only the
    # lesson reports it, and so does naming only the chapter (the file that broke it); naming
    # an unrelated file does not.
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "planned: order", "planned: ordering")
    lesson = run_check(course, [f"course/{LESSON}"])
    assert {(d.code, d.path) for d in lesson} == {("CK501", f"course/{LESSON}")}
    chapter = run_check(course, [f"course/{CHAPTER}"])
    assert {(d.code, d.path) for d in chapter} == {("CK501", f"course/{LESSON}")}
    assert not run_check(course, [f"course/{BOOK0}"])


def test_removing_a_symbol_from_the_table_is_caught_when_the_table_is_named(
    tmp_path: Path,
) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / CHAPTER,
        "  - symbol: x_t\n    meaning: the vector of the token at position t\n",
        "",
    )
    found = run_check(course, [f"course/{CHAPTER}"])
    assert "CK204" in {d.code for d in found}
