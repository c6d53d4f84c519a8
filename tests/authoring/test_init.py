"""`coursekit init`: a course repository that passes `check` at once, idempotent, never overwrites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]
from click.testing import CliRunner

from coursekit import __version__, schemas
from coursekit.cli import main

MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)


def init(target: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["init", str(target), *args], catch_exceptions=False)
    return result.exit_code, result.output


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_an_empty_folder_becomes_a_course_that_passes_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = init(tmp_path / "new", "--title", "Signals: a course")
    assert code == 0, out
    root = tmp_path / "new"
    course = yaml.safe_load((root / "course/course.yaml").read_text(encoding="utf-8"))
    assert course["title"] == "Signals: a course"
    assert course["books"] == ["0", "I"]
    assert [s["id"] for s in course["strands"]] == [
        *("basics", "concept", "theory", "mathematics", "practice")
    ]
    assert [m["id"] for m in course["maturity"]] == ["M0", "M1", "M2", "M3", "M4"]
    (chapter,) = root.glob("course/I/*/chapter.yaml")
    assert yaml.safe_load(chapter.read_text(encoding="utf-8"))["maturity"] == "M0"
    assert schemas.stale(root / "schemas") == []
    hooks = yaml.safe_load((root / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (repo,) = hooks["repos"]
    assert repo["rev"] == f"v{__version__}"
    assert [h["id"] for h in repo["hooks"]] == ["coursekit-check-files", "coursekit-schema"]
    assert ".coursekit_cache/" in (root / ".gitignore").read_text(encoding="utf-8").split()
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["check", "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "All checks passed." in result.output


def test_every_modeline_init_writes_resolves(tmp_path: Path) -> None:
    init(tmp_path)
    yamls = list((tmp_path / "course").rglob("*.yaml"))
    assert len(yamls) == 4
    for path in yamls:
        found = MODELINE.search(path.read_text(encoding="utf-8"))
        assert found, f"{path}: no modeline"
        assert (path.parent / found.group(1)).resolve().is_file(), f"{path}: {found.group(1)}"


def test_a_second_init_changes_nothing(tmp_path: Path) -> None:
    init(tmp_path)
    before = snapshot(tmp_path)
    code, out = init(tmp_path)
    assert code == 0
    assert "nothing to do" in out
    assert snapshot(tmp_path) == before


def test_a_file_with_other_content_stops_init_before_any_write(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("mine\n", encoding="utf-8")
    before = snapshot(tmp_path)
    code, out = init(tmp_path)
    assert code == 2
    assert "overwrites nothing: .pre-commit-config.yaml" in out
    assert snapshot(tmp_path) == before


def test_an_existing_gitignore_is_extended_not_replaced(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pdf", encoding="utf-8")
    code, _ = init(tmp_path)
    assert code == 0
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "*.pdf\n.coursekit_cache/\n"


def test_init_on_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x", encoding="utf-8")
    result = CliRunner().invoke(main, ["init", str(target)])
    assert result.exit_code == 2
    assert target.read_text(encoding="utf-8") == "x"


def test_hooks_repo_is_written_to_pre_commit_and_ci(tmp_path: Path) -> None:
    code, out = init(tmp_path, "--hooks-repo", "https://git.example.org/tools/coursekit.git")
    assert code == 0, out
    config = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert config["repos"][0]["repo"] == "https://git.example.org/tools/coursekit.git"
    workflow = (tmp_path / ".github/workflows/course.yml").read_text(encoding="utf-8")
    assert f"git+https://git.example.org/tools/coursekit.git@v{__version__}" in workflow


@pytest.mark.parametrize("url", ['x" && rm -rf ~ "', "a b", "", "https://h/x#frag"])
def test_a_hooks_repo_that_would_break_yaml_or_the_shell_is_refused(
    tmp_path: Path, url: str
) -> None:
    code, out = init(tmp_path / "new", "--hooks-repo", url)
    assert code == 2
    assert "--hooks-repo" in out
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_a_blank_or_broken_title_is_refused(tmp_path: Path, title: str) -> None:
    code, out = init(tmp_path / "new", "--title", title)
    assert code == 2
    assert "--title" in out
    assert not (tmp_path / "new").exists()


def test_the_workflow_uploads_the_owed_dashboard_it_writes(tmp_path: Path) -> None:
    code, out = init(tmp_path)
    assert code == 0, out
    workflow = yaml.safe_load((tmp_path / ".github/workflows/course.yml").read_text("utf-8"))
    steps = workflow["jobs"]["course"]["steps"]
    written = [s for s in steps if "--format html --output-file" in s.get("run", "")]
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert len(written) == 1 and len(uploads) == 1
    page = written[0]["run"].split("--output-file")[1].split()[0]
    assert uploads[0]["with"]["path"] == page
    assert steps.index(written[0]) < steps.index(uploads[0])
