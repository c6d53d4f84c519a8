"""CK107 and CK108, and what follows a structural failure: one diagnostic, not a cascade."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import BOOK0, CHAPTER, COURSE, LESSON, Case, assert_case, copy_golden, edit, run_check

BOOK_I = "I/book.yaml"
REPO_COURSE = Path(__file__).resolve().parents[2] / "course"
II2 = "II/2-from-recurrence-to-attention"

CASES = [
    Case("CK107", COURSE, [(COURSE, 'books: ["0", I]', 'books: ["0", I, I]')], "books:"),
    Case("CK107", BOOK_I, [(BOOK_I, "chapters: [I.1]", "chapters: [I.1, I.1]")], "chapters:"),
    Case(
        "CK107",
        CHAPTER,
        [
            (
                CHAPTER,
                "problems: [count-tokens]",
                "  - planned: tokens\n    strand: theory\n    title: Again\n"
                "problems: [count-tokens]",
            )
        ],
        "planned: tokens",
        at="tokens",
    ),
    Case(
        "CK107",
        CHAPTER,
        [(CHAPTER, "problems: [count-tokens]", "problems: [count-tokens, count-tokens]")],
        "problems:",
    ),
    Case("CK108", CHAPTER, [(CHAPTER, "id: I.1\n", "id: I.2\n")], "id: I.2", at="I.2"),
    Case("CK108", BOOK_I, [(BOOK_I, "id: I\n", "id: II\n")], "id: II", at="II"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


# A structural failure is reported once: no family judges what did not load -----------------


def _bundled(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(REPO_COURSE, target)
    return target


def _golden_breakages() -> dict[str, Callable[[Path], None]]:
    return {
        "chapter id misplaced": lambda c: edit(c / CHAPTER, "id: I.1\n", "id: I.2\n"),
        "chapter yaml broken": lambda c: edit(c / CHAPTER, "dek: Tokens", "dek: [Tokens"),
        "book yaml broken": lambda c: edit(c / BOOK_I, "title: Sequences", "title: [Sequences"),
        "book 0 broken": lambda c: _append(c / BOOK0, "  broken: [\n"),
        "lesson front matter broken": lambda c: edit(c / LESSON, "title: Tokens", "title: [Tokens"),
        "chapter folder duplicated": lambda c: shutil.copytree(
            c / "I/1-first-steps", c / "I/1-copy"
        ),
    }


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _bundled_breakages() -> dict[str, Callable[[Path], None]]:
    return {
        "CK108 in II.2": lambda c: edit(c / II2 / "chapter.yaml", "id: II.2\n", "id: II.5\n"),
        "II.2 folder duplicated": lambda c: shutil.copytree(c / II2, c / "II/2-copy"),
    }


def _new_findings(course: Path, breakage: Callable[[Path], None]) -> list[str]:
    options = {"formulas": False}
    before = {(d.code, d.path, d.message) for d in run_check(course, options=options)}
    breakage(course)
    return [
        f"{d.code} {d.path}:{d.line} {d.message}"
        for d in run_check(course, options=options)
        if (d.code, d.path, d.message) not in before
    ]


def _assert_one_structural_error(found: list[str]) -> None:
    assert found, "the breakage was not reported"
    assert all(re.match(r"CK1\d\d ", line) for line in found), "\n".join(found)
    assert len(found) <= 2, "\n".join(found)


@pytest.mark.parametrize("name", sorted(_golden_breakages()))
def test_a_structural_failure_does_not_cascade(tmp_path: Path, name: str) -> None:
    _assert_one_structural_error(_new_findings(copy_golden(tmp_path), _golden_breakages()[name]))


@pytest.mark.parametrize("name", sorted(_bundled_breakages()))
def test_the_bundled_course_reports_a_misplaced_chapter_once(tmp_path: Path, name: str) -> None:
    """Today's main follows each with a dozen CK501 "did you mean 'II.2'" for 'II.2'."""
    _assert_one_structural_error(_new_findings(_bundled(tmp_path), _bundled_breakages()[name]))


def test_a_did_you_mean_never_suggests_the_value_it_rejects() -> None:
    from coursekit.hints import did_you_mean

    assert did_you_mean("II.2", ["II.2", "II.3"]) == "; did you mean 'II.3'?"
    assert did_you_mean("II.2", ["II.2"]) == ""
    assert did_you_mean("II.2", ["II.2"], otherwise=" (known: II.2)") == " (known: II.2)"


def test_every_kind_of_repeat_is_reported_once_in_file_order(tmp_path: Path) -> None:
    """CK107 and CK111: every repeat and unknown name once, at its own line and column."""
    course = copy_golden(tmp_path)
    edit(course / COURSE, 'books: ["0", I]', 'books: ["0", I, I, "0"]')
    edit(course / CHAPTER, "problems: [count-tokens]", "problems: [count-tokens, count-tokens]")
    edit(course / CHAPTER, "exercises: [first-token]", "exercises: [first-token, first-token]")
    edit(course / CHAPTER, "maturity: M0", "maturity: M7")
    edit(course / CHAPTER, "strand: concept", "strand: concepts")
    found = [
        (d.code, d.path, d.line, d.column, d.message)
        for d in run_check(course)
        if d.code in ("CK107", "CK111")
    ]
    chapter = f"course/{CHAPTER}"
    assert found == [
        (
            "CK111",
            chapter,
            8,
            11,
            "unknown maturity level 'M7' (one of: M0, M1)",
        ),
        (
            "CK111",
            chapter,
            37,
            13,
            "unknown strand 'concepts'; did you mean 'concept'? "
            "(one of: basics, concept, theory, mathematics, practice)",
        ),
        ("CK107", chapter, 39, 26, "problem 'count-tokens' is listed twice"),
        ("CK107", chapter, 40, 26, "exercise 'first-token' is listed twice"),
        ("CK107", "course/course.yaml", 3, 17, "book 'I' is listed twice"),
        ("CK107", "course/course.yaml", 3, 20, "book '0' is listed twice"),
    ]


# One chapter-id pattern: the loader and CK106 agree on what a chapter id is ------------------


@pytest.mark.parametrize("bad", ["A.7", "1.7", "Z.7"])
def test_a_non_roman_chapter_id_is_malformed_once_not_also_missing(
    tmp_path: Path, bad: str
) -> None:
    """The loader defers a malformed id to CK106 instead of also looking for its folder (CK109)."""
    course = copy_golden(tmp_path)
    edit(course / BOOK_I, "chapters: [I.1]", f"chapters: [I.1, {bad}]")
    found = sorted((d.code, d.message) for d in run_check(course))
    codes_seen = {code for code, _ in found}
    assert "CK106" in codes_seen, found
    assert "CK109" not in codes_seen, found


def test_loader_and_rule_share_the_chapter_id_pattern() -> None:
    from coursekit.load import loader
    from coursekit.model import ids
    from coursekit.rules import structure

    assert vars(loader)["CHAPTER_ID"] is ids.CHAPTER_ID
    assert vars(structure)["CHAPTER_ID"] is ids.CHAPTER_ID
