"""`coursekit new`: next id, files that pass `check`, parent manifest changed only by additions."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursekit.load.yamlparse import parse_yaml
from coursekit.options import Options

from .conftest import II2, added_only, changed_lines, diagnostics, run, snapshot


def test_new_lesson_into_ii2_then_check_passes_and_the_manifest_only_gains_lines(
    project_dir: Path,
) -> None:
    manifest = project_dir / II2 / "chapter.yaml"
    before_text = manifest.read_text(encoding="utf-8")
    before = diagnostics(project_dir)
    code, out = run(
        "new", "lesson", "--chapter", "II.2", "--title", "Masks, in pictures", "--strand", "concept"
    )
    assert code == 0, out
    after_text = manifest.read_text(encoding="utf-8")
    assert added_only(before_text, after_text) == ["  - lesson: masks-in-pictures\n"]
    lesson = project_dir / II2 / "lessons" / "masks-in-pictures.md"
    assert lesson.read_text(encoding="utf-8").startswith(
        "---\ntitle: Masks, in pictures\nstrand: concept\n"
    )
    assert diagnostics(project_dir) - before == set()  # nothing new to report
    exit_code, _ = run("check")
    assert exit_code == (1 if _errors(before) else 0)  # 0 on the real course: no errors


def _errors(found: set[tuple[str, str, str]]) -> bool:
    from coursekit.rules import REGISTRY

    return any(REGISTRY[c].severity == "error" for c, *_ in found if c in REGISTRY)


@pytest.mark.parametrize(
    ("args", "parent", "expected_added", "created"),
    [
        (
            ["new", "book", "--title", "Transformers at Scale"],
            "course/course.yaml",
            None,
            ["course/III/book.yaml"],
        ),
        (
            [
                "new",
                "chapter",
                "--book",
                "II",
                "--title",
                "The Transformer",
                "--author",
                "Helena Marsh",
            ],
            "course/II/book.yaml",
            None,
            ["course/II/3-the-transformer/chapter.yaml"],
        ),
        (
            [
                "new",
                "problem",
                "--chapter",
                "II.2",
                "--title",
                "Cost at a hundred tokens",
                "--variant",
                "cost-count",
            ],
            f"{II2}/chapter.yaml",
            None,
            [
                f"{II2}/problems/cost-at-a-hundred-tokens/problem.yaml",
                f"{II2}/problems/cost-at-a-hundred-tokens/solution.py",
            ],
        ),
        (
            ["new", "exercise", "--chapter", "II.2", "--title", "Row sums of the weights"],
            f"{II2}/chapter.yaml",
            None,
            [f"{II2}/exercises/row-sums-of-the-weights/exercise.yaml"],
        ),
        (
            ["new", "exercise", "--chapter", "II.2", "--title", "Count the cells", "--program"],
            f"{II2}/chapter.yaml",
            None,
            [
                f"{II2}/exercises/count-the-cells/exercise.yaml",
                f"{II2}/exercises/count-the-cells/solution.py",
            ],
        ),
        (
            ["new", "apparatus", "--area", "LA", "--title", "Matrix rank"],
            "course/0/book.yaml",
            ["  - id: 0.LA.04\n", "    title: Matrix rank\n", "    status: planned\n"],
            [],
        ),
    ],
    ids=["book", "chapter", "problem", "exercise", "exercise-program", "apparatus"],
)
def test_new_registers_in_the_parent_touching_nothing_else(
    project_dir: Path,
    args: list[str],
    parent: str,
    expected_added: list[str] | None,
    created: list[str],
) -> None:
    before_files = snapshot(project_dir)
    before = diagnostics(project_dir)
    code, out = run(*args)
    assert code == 0, out
    after_files = snapshot(project_dir)
    old = before_files[parent].decode()
    new = after_files[parent].decode()
    if (
        "[" in "".join(changed_lines(old, new)[0])
        if len(old.splitlines()) == len(new.splitlines())
        else False
    ):
        ((line_old, line_new),) = changed_lines(old, new)  # a flow list gained one entry, in place
        assert line_new.startswith(line_old.rstrip("]\n").rstrip("]"))
    else:
        added = added_only(old, new)
        if expected_added is not None:
            filled = [line for line in added if line.strip()]
            assert filled[: len(expected_added)] == expected_added
    for path in created:
        assert path in after_files and path not in before_files
    untouched = set(before_files) - {parent}
    assert all(after_files[p] == before_files[p] for p in untouched)
    assert set(after_files) - set(before_files) == set(created)
    assert diagnostics(project_dir) - before == set()


def test_new_problem_solution_is_confirmed_by_its_program(project_dir: Path) -> None:
    from coursekit.engine import check
    from coursekit.project import find_project

    code, _ = run("new", "problem", "--chapter", "II.2", "--title", "Cells in the grid")
    assert code == 0
    result = check(find_project(project_dir), options=Options(exec=True))
    mine = [d for d in result.diagnostics if "cells-in-the-grid" in d.path]
    assert mine == []


def test_next_ids_follow_the_existing_ones(project_dir: Path) -> None:
    assert run("new", "chapter", "--book", "II", "--title", "Three")[0] == 0
    assert run("new", "chapter", "--book", "II", "--title", "Four")[0] == 0
    book = parse_yaml((project_dir / "course/II/book.yaml").read_text(encoding="utf-8"), "b")[0]
    assert book["chapters"][-2:] == ["II.3", "II.4"]
    assert (project_dir / "course/II/4-four/chapter.yaml").is_file()
    assert run("new", "apparatus", "--area", "IT", "--title", "Mutual information")[0] == 0
    assert run("new", "book", "--title", "Three")[0] == 0
    assert run("new", "book", "--title", "Four")[0] == 0
    course = parse_yaml((project_dir / "course/course.yaml").read_text(encoding="utf-8"), "c")[0]
    assert course["books"][-2:] == ["III", "IV"]
    zero = parse_yaml((project_dir / "course/0/book.yaml").read_text(encoding="utf-8"), "z")[0]
    ids = [entry["id"] for entry in zero["apparatus"]]
    assert ids.index("0.IT.03") == ids.index("0.IT.02") + 1  # kept with its area


def test_new_chapter_is_at_the_lowest_rung_as_a_draft_with_thesis_equal_to_prop_1(
    project_dir: Path,
) -> None:
    assert run("new", "chapter", "--book", "I", "--title", "Attention arrives")[0] == 0
    text = (project_dir / "course/I/5-attention-arrives/chapter.yaml").read_text(encoding="utf-8")
    chapter = parse_yaml(text, "c")[0]
    assert chapter["id"] == "I.5" and chapter["status"] == "draft" and chapter["maturity"] == "M0"
    assert chapter["thesis"] == chapter["propositions"][0]["claim"]
    assert "TODO" not in text and "Attention arrives" in chapter["thesis"]
    assert text.startswith("# yaml-language-server: $schema=../../../schemas/chapter.schema.json\n")


def test_new_lesson_from_a_planned_item_replaces_only_that_item(project_dir: Path) -> None:
    manifest = project_dir / II2 / "chapter.yaml"
    old = manifest.read_text(encoding="utf-8")
    before = diagnostics(project_dir)
    assert run("new", "lesson", "--chapter", "II.2", "--id", "masks")[0] == 0
    new = manifest.read_text(encoding="utf-8")
    old_lines, new_lines = old.splitlines(True), new.splitlines(True)
    at = old_lines.index("  - planned: masks\n")
    assert new_lines == [*old_lines[:at], "  - lesson: masks\n", *old_lines[at + 3 :]]
    lesson = (project_dir / II2 / "lessons/masks.md").read_text(encoding="utf-8")
    assert "title: Masks, or how to train a decoder in one pass\nstrand: mathematics\n" in lesson
    assert diagnostics(project_dir) - before == set()


def test_dry_run_prints_the_diff_and_writes_nothing(project_dir: Path) -> None:
    before = snapshot(project_dir)
    code, out = run(
        "new", "lesson", "--chapter", "II.2", "--title", "Extra", "--strand", "basics", "--dry-run"
    )
    assert code == 0
    assert "+  - lesson: extra\n" in out and "--- /dev/null" in out
    assert snapshot(project_dir) == before


def test_a_parent_with_yaml_errors_is_never_rewritten(project_dir: Path) -> None:
    book = project_dir / "course/II/book.yaml"
    broken = book.read_text(encoding="utf-8") + "chapters: [II.1\n"
    book.write_text(broken, encoding="utf-8")
    code, out = run("new", "chapter", "--book", "II", "--title", "Nope")
    # a manifest that did not load is bad input: exit 1, pointing at it (issue #19)
    assert code == 1 and "course/II/book.yaml:" in out and " CK101 " in out
    assert book.read_text(encoding="utf-8") == broken
    assert not any((project_dir / "course/II").glob("3-*"))


@pytest.mark.parametrize(
    "args",
    [
        ["new", "lesson", "--chapter", "II.9", "--title", "x", "--strand", "basics"],
        ["new", "lesson", "--chapter", "II.2", "--title", "x", "--strand", "nonsense"],
        [
            "new",
            "lesson",
            "--chapter",
            "II.2",
            "--title",
            "Goodbye to recurrence",
            "--strand",
            "basics",
        ],
        ["new", "apparatus", "--area", "ZZ", "--title", "x"],
        ["new", "chapter", "--title", "no book"],
    ],
)
def test_usage_problems_exit_2_and_write_nothing(project_dir: Path, args: list[str]) -> None:
    before = snapshot(project_dir)
    code, out = run(*args)
    assert code == 2, out
    assert snapshot(project_dir) == before


def test_a_title_that_names_a_planned_item_says_how_to_write_it(project_dir: Path) -> None:
    before = snapshot(project_dir)
    code, out = run(
        "new", "lesson", "--chapter", "II.2", "--title", "Masks", "--strand", "mathematics"
    )
    assert code == 2
    assert "'masks' is already a planned item of II.2" in out
    assert "coursekit new lesson --chapter II.2 --id masks" in out
    assert snapshot(project_dir) == before
