"""`coursekit owed` shows every chapter, and counts problems exactly as CK7xx does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from helpers import CHAPTER, copy_golden, edit, line_of, run_check

REAL = Path(__file__).resolve().parents[1] / "course"
II2 = "II/2-from-recurrence-to-attention"
PROGRAM = "I/1-first-steps/problems/count-tokens/solution.py"


def owed(course: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["owed", "--course", str(course), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.fixture
def real(tmp_path: Path) -> Path:
    shutil.copytree(REAL, tmp_path / "course")
    return tmp_path / "course"


def test_a_chapter_that_does_not_load_is_a_row_and_owed_exits_1(real: Path) -> None:
    chapter = real / II2 / "chapter.yaml"
    edit(chapter, "\nauthors:", "\n  authors:")  # bad indentation: a YAML error
    code, out = owed(real)
    assert code == 1, out
    assert out.splitlines()[-1].startswith("6 chapters · ")
    assert "1 chapter not loaded: owed content unknown" in out
    row = out[out.index("II.2  (does not load)") :]
    assert f"does not load: course/{II2}/chapter.yaml:" in row.splitlines()[1]
    assert " CK101 " in row.splitlines()[1]

    code, out = owed(real, "--chapter", "II.2")
    assert code == 1, out
    assert out.startswith("II.2  (does not load)\n")

    code, out = owed(real, "--format", "json")
    assert code == 1
    data = json.loads(out)
    (broken,) = [c for c in data["chapters"] if not c["loads"]]
    assert broken["id"] == "II.2" and broken["owes"] is None
    (failure,) = broken["failures"]
    assert failure["path"] == f"course/{II2}/chapter.yaml" and failure["code"] == "CK101"
    assert failure["line"] == line_of(chapter, "  authors:")
    assert data["incomplete"] is True

    code, out = owed(real, "--format", "markdown")
    assert code == 1
    assert "| ❌ **II.2** does not load |" in out
    assert f"does not load: `course/{II2}/chapter.yaml:" in out


def test_a_chapter_that_fails_its_schema_is_a_row_with_each_failure(real: Path) -> None:
    edit(real / II2 / "chapter.yaml", "\nstatus: draft", "\nstatsu: draft")
    code, out = owed(real, "--chapter", "II.2")
    assert code == 1
    assert "CK103 unknown key 'statsu'" in out


def test_a_listed_chapter_without_its_folder_is_a_row(real: Path) -> None:
    edit(real / "II/book.yaml", "chapters: [II.1, II.2]", "chapters: [II.1, II.2, II.3]")
    code, out = owed(real)
    assert code == 1
    assert "II.3  (does not load)\n  does not load: course/II/book.yaml:" in out


def test_a_lesson_that_does_not_load_makes_its_chapter_short(real: Path) -> None:
    lesson = next((real / II2 / "lessons").glob("*.md"))
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.replace("\nstrand:", "\n  strand:", 1), encoding="utf-8")
    code, out = owed(real, "--chapter", "II.2")
    assert code == 1
    rel = f"course/{II2}/lessons/{lesson.name}"
    assert f"  does not load: {rel}:" in out
    assert "1 file not loaded: counts short" in out


def test_a_book_that_does_not_load_is_reported(real: Path) -> None:
    edit(real / "II/book.yaml", "chapters: [II.1, II.2]", "chapters: [II.1, II.2")
    code, out = owed(real)
    assert code == 1
    assert out.startswith("does not load: course/II/book.yaml:")


def test_owed_and_check_agree_about_a_problem_whose_program_fails(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROGRAM, "return 4", "return 5")
    by_check = {d.code for d in run_check(course, options={"exec": True})}
    assert "CK702" in by_check and any(code.startswith("CK9") for code in by_check)
    code, out = owed(course, "--format", "json", "--no-cache")
    assert code == 0, out
    (chapter,) = json.loads(out)["chapters"]
    assert chapter["problems"]["written"] == 0  # as CK702 says: the program does not confirm
    assert chapter["unverified"] == 0


def test_without_running_programs_both_say_unverified(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROGRAM, "return 4", "return 5")
    assert "CK702" not in {d.code for d in run_check(course, options={"exec": False})}
    code, out = owed(course, "--format", "json", "--no-exec")
    assert code == 0, out
    (chapter,) = json.loads(out)["chapters"]
    assert chapter["problems"]["written"] == 1 and chapter["unverified"] == 1
    code, out = owed(course, "--no-exec")
    assert "1 problem unverified (program not run)" in out


def test_the_whole_course_does_not_load(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / "course.yaml", "\nbooks:", "\n  books:")
    code, out = owed(course)
    assert code == 1
    assert out.startswith("does not load: course/course.yaml:")


def test_a_golden_chapter_still_exits_0(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "status: published", "status: draft")
    assert owed(course)[0] == 0
