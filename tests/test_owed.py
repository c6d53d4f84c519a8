"""The owed arithmetic, and `coursekit owed` in its three formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from coursekit.load import load_course
from coursekit.owed import course_owed
from helpers import CHAPTER, GOLDEN, PROBLEM, copy_golden, edit

SEED = Path(__file__).resolve().parent / "fixtures" / "seed-course" / "course"


def owed_json(course: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(course), "--format", "json", *args]
    )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def test_seed_page_numbers() -> None:
    data = owed_json(SEED, "--chapter", "II.2")
    (chapter,) = data["chapters"]
    assert chapter["id"] == "II.2"
    assert chapter["maturity"] == "M2" and chapter["maturity_name"] == "Substantive"
    assert chapter["status"] == "draft"
    assert chapter["strands"] == {
        "basics": {"written": 3, "required": 9},
        "concept": {"written": 2, "required": 2},
        "theory": {"written": 0, "required": 2},
        "mathematics": {"written": 0, "required": 9},
        "practice": {"written": 0, "required": 6},
    }
    assert chapter["problems"] == {"written": 0, "required": 3}
    assert chapter["variants"] == {"written": 0, "required": 3}
    assert chapter["exercises"] == {"written": 0, "required": 6}
    assert chapter["owes"] == 9
    assert data["total"]["owes"] == 9


def _add_problem(course: Path, slug: str, variant: str, published: bool = True) -> None:
    folder = course / "I/1-first-steps/problems" / slug
    folder.mkdir(parents=True)
    solution = "solution:\n  value: 4\n" if published else "solution: {}\n"
    (folder / "problem.yaml").write_text(
        f"title: {slug}\nvariant: {variant}\nstatement: Count $T$.\n{solution}supports: [1]\n"
    )
    (folder / "solution.py").write_text("def solve() -> int:\n    return 4\n")


@pytest.mark.parametrize(
    ("problems", "expected"),
    [
        # (extra problems as (variant, published), (problems written, variants written, owes))
        ([], (1, 1, 3 + 3 + 0)),  # M3 below: 4 problems, 2 variants, 4 exercises
        ([("count", True)], (2, 1, 2 + 3 + 0)),
        ([("count", True), ("count", True), ("count", True)], (4, 1, 0 + 3 + 1)),
        ([("count", True), ("other", True)], (3, 2, 1 + 3 + 0)),
        ([("other", False)], (1, 1, 3 + 3 + 0)),  # no published solution: not written
    ],
)
def test_owes_arithmetic(
    tmp_path: Path, problems: list[tuple[str, bool]], expected: tuple[int, int, int]
) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / "course.yaml",
        "notation:\n",
        "  - id: M3\n    name: Full\n    requires:\n      problems: 4\n      variants: 2\n"
        "      exercises: 4\nnotation:\n",
    )
    edit(course / CHAPTER, "maturity: M0", "maturity: M3")
    slugs = []
    for index, (variant, published) in enumerate(problems):
        slug = f"extra-{index}"
        _add_problem(course, slug, variant, published)
        slugs.append(slug)
    edit(
        course / CHAPTER,
        "problems: [count-tokens]",
        f"problems: [{', '.join(['count-tokens', *slugs])}]",
    )
    loaded = load_course(course, tmp_path).course
    (chapter,) = course_owed(loaded).chapters
    assert (chapter.problems.written, chapter.variants.written, chapter.owes) == expected


def test_problem_without_program_does_not_count(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    (course / "I/1-first-steps/problems/count-tokens/solution.py").unlink()
    (chapter,) = course_owed(load_course(course, tmp_path).course).chapters
    assert chapter.problems.written == 0 and chapter.owes == 1


def test_confirmed_hook(tmp_path: Path) -> None:
    loaded = load_course(copy_golden(tmp_path), tmp_path).course
    (chapter,) = course_owed(loaded, confirmed=lambda problem: False).chapters
    assert chapter.problems.written == 0


def test_planned_items_do_not_count_and_strands_owe_separately(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "maturity: M0", "maturity: M1")
    (chapter,) = course_owed(load_course(course, tmp_path).course).chapters
    assert chapter.strands["basics"].as_dict() == {"written": 1, "required": 2}
    assert chapter.strands["concept"].as_dict() == {"written": 0, "required": 1}  # planned
    assert chapter.owes == 1 + 1 + 0  # strands are reported, never part of `owes`


def test_text_format_is_a_table_and_exits_0() -> None:
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(SEED), "--chapter", "II.2"]
    )
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "II.2  From Recurrence to Attention"
    assert lines[1].strip() == "M2 Substantive · draft · owes 9 items and 23 strand lessons"
    row = next(line for line in lines if line.strip().startswith("basics"))
    assert row.split() == ["basics", "3", "9", "6"]


def test_markdown_format_has_a_course_table_and_marks() -> None:
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(SEED), "--format", "markdown"]
    )
    assert result.exit_code == 0
    text = result.output
    assert text.startswith("## Owed content")
    # A draft that owes is in progress, not red: its check passes.
    assert (
        "| 🚧 **II.2** From Recurrence to Attention | M2 Substantive | draft | 5/28 | 0/3 | 0/3 "
        "| 0/6 | 9 items, 23 lessons |" in text
    )
    assert "| 🚧 basics | 3 | 9 | 6 |" in text and "| ✅ concept | 2 | 2 |  |" in text
    assert "| ❌" not in text and "\n❌" not in text
    # Both debts on one line; every number column right-aligned, "owed" like its neighbours.
    assert "M2 Substantive · draft · **owes 9 items and 23 strand lessons**" in text
    assert "|:--|--:|--:|--:|" in text and "|:--|--:|--:|:--|" not in text


def test_markdown_marks_a_published_chapter_that_owes_red(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(SEED, course)
    (chapter,) = course.glob("II/2-*/chapter.yaml")
    text = chapter.read_text(encoding="utf-8")
    chapter.write_text(text.replace("status: draft", "status: published"), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(course), "--format", "markdown"]
    )
    assert "| ❌ **II.2** From Recurrence to Attention |" in result.output
    assert "| ❌ basics | 3 | 9 | 6 |" in result.output


def test_unknown_chapter_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(GOLDEN), "--chapter", "I.2"]
    )
    assert result.exit_code == 2
    assert "did you mean 'I.1'" in result.output


def test_golden_owes_nothing() -> None:
    data = owed_json(GOLDEN)
    assert data["total"]["owes"] == 0
    assert PROBLEM.endswith("problem.yaml")
