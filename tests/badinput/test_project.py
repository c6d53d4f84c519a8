"""The project is found once, by the README's rule; a broken inner course is an error, never a
silent walk up to an enclosing project, and `new` writes only inside the project it names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import CH, GOLDEN, cli, snapshot

NEW_LESSON = ("new", "lesson", "--chapter", "I.1", "--title", "Masks", "--strand", "basics")


@pytest.fixture
def inner(project: Path) -> Path:
    """A second course nested inside `project` (not its own repository)."""
    root = project / "work" / "inner"
    shutil.copytree(GOLDEN, root / "course")
    return root


def test_an_inner_course_without_course_yaml_is_an_error_not_the_outer_one(
    project: Path, inner: Path
) -> None:
    (inner / "course" / "course.yaml").unlink()
    before = snapshot(project)
    for args in (("check", "--no-exec"), ("owed",), ("fix",), NEW_LESSON):
        result = cli(inner / "course" / "I", *args)
        assert result.code == 2, (args, result.output)
        assert f"the project at {inner} has no course/course.yaml" in result.output
    assert snapshot(project) == before


def test_an_inner_course_yaml_that_loops_is_reported_there(project: Path, inner: Path) -> None:
    manifest = inner / "course" / "course.yaml"
    manifest.unlink()
    manifest.symlink_to("loop")
    (inner / "course" / "loop").symlink_to("course.yaml")
    before = snapshot(project)
    for args in (("check", "--no-exec"), ("owed",), NEW_LESSON):
        result = cli(inner, *args)
        assert result.code == 1, (args, result.output)
        assert "course/course.yaml:1:1: CK102" in result.output
        assert "loops" in result.output
    assert snapshot(project) == before


def test_the_search_stops_at_the_repository_root(project: Path, tmp_path: Path) -> None:
    repo = project / "vendored" / "other"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    result = cli(repo / "docs", "check", "--no-exec")
    assert result.code == 2
    assert "up to the repository root" in result.output


def test_tool_coursekit_marks_the_project_even_without_a_course(project: Path) -> None:
    inner = project / "work" / "declared"
    inner.mkdir(parents=True)
    (inner / "pyproject.toml").write_text('[tool.coursekit]\ncourse = "text"\n', encoding="utf-8")
    result = cli(inner, "check", "--no-exec")
    assert result.code == 2
    assert f"the project at {inner} has no text/course.yaml" in result.output


def test_a_course_is_found_from_deep_inside_it(project: Path) -> None:
    result = cli(project / CH / "lessons", "check", "--no-exec")
    assert result.code == 0, result.output


def test_new_names_the_project_and_writes_only_inside_it(project: Path) -> None:
    result = cli(project / CH, *NEW_LESSON)
    assert result.code == 0, result.output
    assert f"created lesson masks in {project}" in result.output
    assert (project / CH / "lessons" / "masks.md").is_file()


def test_new_refuses_a_folder_that_links_out_of_the_project(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(project / CH / "lessons", outside)
    (project / CH / "lessons").symlink_to(outside, target_is_directory=True)
    before, elsewhere = snapshot(project), snapshot(outside)
    result = cli(project, *NEW_LESSON)
    assert result.code == 2, result.output
    assert "leads outside the project" in result.output
    assert snapshot(project) == before and snapshot(outside) == elsewhere


def test_new_against_a_50_mb_course_yaml_points_at_that_file(project: Path) -> None:
    manifest = project / "course" / "course.yaml"
    with open(manifest, "a", encoding="utf-8") as handle:
        handle.write("# " + "x" * (50 * 1024 * 1024) + "\n")
    before = snapshot(project)
    result = cli(project, *NEW_LESSON)
    assert result.code == 1
    assert "course/course.yaml:1:1: CK102 file is 50.0 MiB" in result.output
    assert snapshot(project) == before
