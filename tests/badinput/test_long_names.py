"""A name over 255 bytes, or a 5,000-digit book number, is a diagnostic where it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CH, CHAPTER, PROBLEM, cli, line_of, replace_in, snapshot

LONG = "a" * 300
DIGITS = "9" * 5000

# (file, old, new, the text on the line the diagnostic must point at)
CASES = {
    "lesson": (CHAPTER, "- lesson: tokens", f"- lesson: {LONG}", "- lesson: a"),
    "problem": (CHAPTER, "problems: [count-tokens]", f"problems: [{LONG}]", "problems:"),
    "exercise": (CHAPTER, "exercises: [first-token]", f"exercises: [{LONG}]", "exercises:"),
    "program": (PROBLEM, "program: solution.py", f"program: {LONG}", "program:"),
    "book id": ("course/course.yaml", 'books: ["0", I]', f'books: ["0", I, {LONG}]', "books:"),
    "book number": (
        "course/course.yaml",
        'books: ["0", I]',
        f'books: ["0", I, {DIGITS}]',
        "books:",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_reports_a_name_too_long_at_its_line(project: Path, case: str) -> None:
    file, old, new, needle = CASES[case]
    replace_in(project / file, old, new)
    before = snapshot(project)
    result = cli(project, "check", "--no-exec", "--no-cache")
    assert result.code == 1
    lines = {line for path, line, _ in result.located("CK109") if path == file}
    assert line_of(project / file, needle) in lines, result.output
    assert "bytes long; a file name holds at most 255" in result.output
    assert snapshot(project) == before


@pytest.mark.parametrize("case", ["exercise", "book number"])
@pytest.mark.parametrize("command", [["owed"], ["fix", "--diff"], ["fix"]])
def test_owed_and_fix_do_not_crash_on_a_name_too_long(
    project: Path, case: str, command: list[str]
) -> None:
    file, old, new, _ = CASES[case]
    replace_in(project / file, old, new)
    before = snapshot(project)
    result = cli(project, *command)
    assert result.code in (0, 1)
    assert snapshot(project) == before


def test_new_with_a_listed_book_number_too_long_still_works(project: Path) -> None:
    file, old, new, _ = CASES["book number"]
    replace_in(project / file, old, new)
    result = cli(
        project, "new", "lesson", "--chapter", "I.1", "--title", "Next", "--strand", "basics"
    )
    assert result.code == 0, result.output
    assert (project / CH / "lessons" / "next.md").is_file()


@pytest.mark.parametrize("kind", ["lesson", "problem", "exercise", "chapter"])
def test_new_refuses_an_id_too_long_and_writes_nothing(project: Path, kind: str) -> None:
    where = ["--book", "I"] if kind == "chapter" else ["--chapter", "I.1"]
    before = snapshot(project)
    result = cli(project, "new", kind, *where, "--title", "T", "--strand", "basics", "--id", LONG)
    assert result.code == 2
    assert "a file name holds at most 255" in result.output
    assert snapshot(project) == before
