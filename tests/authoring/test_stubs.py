"""What `coursekit new` writes is a stub: owed until the author writes it and drops the marker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import CHAPTER, copy_golden, edit, line_of, run_check

from .conftest import II2, diagnostics, run, snapshot


def owed(programs: bool = False) -> dict[str, object]:
    """II.2's row; programs run only where a problem's verdict matters (they cost time)."""
    options = [] if programs else ["--no-exec"]
    code, out = run("owed", "--format", "json", "--chapter", "II.2", *options)
    assert code == 0, out
    (row,) = json.loads(out)["chapters"]
    assert isinstance(row, dict)
    return row


def unstub(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("status: stub")]
    assert len(kept) == len(lines) - 1, f"{path}: no `status: stub` line"
    path.write_text("".join(kept), encoding="utf-8")


def test_a_new_problem_is_owed_until_its_marker_is_removed(project_dir: Path) -> None:
    before = owed()
    code, out = run("new", "problem", "--chapter", "II.2", "--title", "Cost at eight tokens")
    assert code == 0, out
    manifest = project_dir / II2 / "problems/cost-at-eight-tokens/problem.yaml"
    assert "\nstatus: stub" in manifest.read_text(encoding="utf-8")
    after = owed()
    assert after["problems"] == before["problems"]
    assert after["variants"] == before["variants"]
    assert after["owes"] == before["owes"]
    assert after["stubs"] == [f"{II2}/problems/cost-at-eight-tokens/problem.yaml"]
    stub = f"{II2}/problems/cost-at-eight-tokens/problem.yaml"
    assert f"stubs, owed until written: {stub}" in run("owed", "--chapter", "II.2")[1]
    assert f"stubs, owed until written: `{stub}`" in run("owed", "--format", "markdown")[1]
    unstub(manifest)
    written = owed(
        programs=True
    )  # the placeholder program runs, and confirms its placeholder value
    assert written["problems"]["written"] == before["problems"]["written"] + 1  # type: ignore[index]
    assert written["stubs"] == [] and written["unverified"] == 0


@pytest.mark.parametrize("program", [False, True])
def test_a_new_exercise_is_owed_until_written(project_dir: Path, program: bool) -> None:
    before = owed()
    args = ["new", "exercise", "--chapter", "II.2", "--title", "Row sums again"]
    assert run(*args, *(["--program"] if program else []))[0] == 0
    assert owed()["exercises"] == before["exercises"]
    unstub(project_dir / II2 / "exercises/row-sums-again/exercise.yaml")
    assert owed()["exercises"]["written"] == before["exercises"]["written"] + 1  # type: ignore[index]


def test_a_new_lesson_does_not_shorten_what_its_strand_owes(project_dir: Path) -> None:
    before = owed()
    _, text_before = run("owed", "--chapter", "II.2")
    args = ["new", "lesson", "--chapter", "II.2", "--title", "Tokens", "--strand", "basics"]
    assert run(*args)[0] == 0
    after = owed()
    assert after["strands"] == before["strands"]
    _, text_after = run("owed", "--chapter", "II.2")
    short = [line for line in text_before.splitlines() if "strand lessons" in line]
    assert short and all(line in text_after for line in short)
    lesson = project_dir / II2 / "lessons/tokens.md"
    front = lesson.read_text(encoding="utf-8").split("---")[1]
    assert "\nstatus: stub\n" in front
    unstub(lesson)
    strands = owed()["strands"]
    assert strands["basics"]["written"] == before["strands"]["basics"]["written"] + 1  # type: ignore[index]


def test_stubs_pass_check_in_a_draft(project_dir: Path) -> None:
    before = diagnostics(project_dir)
    assert (
        run("new", "lesson", "--chapter", "II.2", "--title", "Tokens", "--strand", "basics")[0] == 0
    )
    assert run("new", "problem", "--chapter", "II.2", "--title", "Eight tokens")[0] == 0
    assert diagnostics(project_dir) - before == set()


def test_a_planned_item_keeps_its_strand_or_new_refuses(project_dir: Path) -> None:
    before = snapshot(project_dir)
    code, out = run("new", "lesson", "--chapter", "II.2", "--id", "masks", "--strand", "theory")
    assert code == 2
    assert "'masks' is planned in II.2 as a mathematics lesson, not theory" in out
    assert snapshot(project_dir) == before
    code, out = run(
        "new", "lesson", "--chapter", "II.2", "--id", "masks", "--strand", "mathematics"
    )
    assert code == 0, out
    lesson = (project_dir / II2 / "lessons/masks.md").read_text(encoding="utf-8")
    assert "\nstrand: mathematics\n" in lesson


def test_a_published_chapter_with_a_stub_fails(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    lesson = "I/1-first-steps/lessons/tokens.md"
    edit(course / lesson, "reading_time: 5\n", "reading_time: 5\nstatus: stub\n")
    found = [d for d in run_check(course) if d.code == "CK706"]
    assert [(d.path, d.line) for d in found] == [
        (f"course/{lesson}", line_of(course / lesson, "status: stub"))
    ]
    assert "published I.1" in found[0].message and "status: stub" in found[0].message
    # The stub is owed too: the one basics lesson M0 asks for is no longer written.
    assert "CK701" in {d.code for d in run_check(course)}
    edit(course / CHAPTER, "status: published", "status: draft")
    assert not [d for d in run_check(course) if d.severity == "error"]


def test_a_stub_problem_in_a_published_chapter_fails(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    problem = "I/1-first-steps/problems/count-tokens/problem.yaml"
    edit(course / problem, "supports:", "status: stub\nsupports:")
    codes = {(d.code, d.path) for d in run_check(course)}
    assert ("CK706", f"course/{problem}") in codes
    assert ("CK702", f"course/{CHAPTER}") in codes
