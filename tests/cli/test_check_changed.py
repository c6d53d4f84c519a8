"""`coursekit check --changed`: what the pre-commit hook runs, deletions and renames included.

Real git in a temporary repository holding the golden course; coursekit in process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coursekit.cli import main
from helpers import CHAPTER, GOLDEN, LESSON, PROBLEM, line_of

PROGRAM = PROBLEM.replace("problem.yaml", "solution.py")


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.course = root / "course"

    def git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def check(self, *paths: str) -> Result:
        named = [str(self.root / p) for p in paths]
        args = ["check", "--changed", "--no-exec", "--no-cache", "--course", str(self.course)]
        return CliRunner().invoke(main, [*args, *named])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Repo]:
    for key in list(os.environ):
        if key.startswith(("GIT_", "PRE_COMMIT")):
            monkeypatch.delenv(key)
    (tmp_path / "gitconfig").write_text(
        "[user]\n\tname = Course Author\n\temail = author@example.invalid\n"
        "[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    shutil.copytree(GOLDEN, root / "course")
    made = Repo(root)
    made.git("init", "-q", "-b", "main")
    made.git("add", "-A")
    made.git("commit", "-q", "-m", "the course")
    monkeypatch.chdir(root)
    yield made


def test_nothing_changed_in_the_course_exits_0_silently(repo: Repo) -> None:
    (repo.root / "README.md").write_text("notes\n", encoding="utf-8")
    repo.git("add", "README.md")
    result = repo.check()
    assert result.exit_code == 0 and result.output == ""


def test_git_rm_of_a_listed_lesson_reports_the_manifest_that_lists_it(repo: Repo) -> None:
    repo.git("rm", "-q", f"course/{LESSON}")
    result = repo.check()  # pre-commit passes no file for a deletion
    assert result.exit_code == 1, result.output
    line = line_of(repo.course / CHAPTER, "- lesson: tokens")
    assert f"course/{CHAPTER}:{line}:" in result.output
    assert "CK109" in result.output and "lessons/tokens.md does not exist" in result.output


def test_git_mv_of_a_listed_lesson_is_refused(repo: Repo) -> None:
    renamed = LESSON.replace("tokens.md", "words.md")
    repo.git("mv", f"course/{LESSON}", f"course/{renamed}")
    result = repo.check(f"course/{renamed}")  # pre-commit passes only the new name
    assert result.exit_code == 1, result.output
    assert f"course/{CHAPTER}:" in result.output and "CK109" in result.output


def test_a_deleted_program_reports_its_problem(repo: Repo) -> None:
    repo.git("rm", "-q", f"course/{PROGRAM}")
    result = repo.check()
    assert result.exit_code == 1, result.output
    assert f"course/{PROBLEM}:" in result.output and "CK109" in result.output


def test_a_deleted_chapter_folder_reports_its_book(repo: Repo) -> None:
    repo.git("rm", "-q", "-r", "course/I/1-first-steps")
    result = repo.check()
    assert result.exit_code == 1, result.output
    assert "course/I/book.yaml:" in result.output and "CK109" in result.output


def test_a_whole_deletion_done_right_passes(repo: Repo) -> None:
    exercise = "course/I/1-first-steps/exercises/first-token"
    chapter = repo.course / CHAPTER
    text = chapter.read_text(encoding="utf-8")
    # Replace the exercise by another one, so the published chapter still has what it owes.
    shutil.copytree(repo.root / exercise, repo.root / exercise.replace("first-token", "next"))
    chapter.write_text(text.replace("[first-token]", "[next]"), encoding="utf-8")
    repo.git("rm", "-q", "-r", exercise)
    repo.git("add", "-A")
    result = repo.check(
        f"course/{CHAPTER}", exercise.replace("first-token", "next") + "/exercise.yaml"
    )
    assert result.exit_code == 0, result.output


def test_a_deletion_already_committed_is_found_in_a_pushed_range(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = repo.git("rev-parse", "HEAD").strip()
    repo.git("rm", "-q", f"course/{LESSON}")
    repo.git("commit", "-q", "-m", "remove a lesson")
    assert repo.check().exit_code == 0  # nothing staged: the index equals HEAD
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", before)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    result = repo.check()
    assert result.exit_code == 1 and "CK109" in result.output, result.output


def test_outside_git_the_whole_course_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above either
    course = tmp_path / "course"
    shutil.copytree(GOLDEN, course)
    (course / LESSON).unlink()
    args = ["check", "--changed", "--no-exec", "--no-cache", "--course", str(course)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "CK109" in result.output
    assert "git cannot list deleted files" in result.output  # CliRunner mixes stderr in


def test_a_deleted_figure_asset_reports_the_chapter(repo: Repo) -> None:
    repo.git("rm", "-q", "course/I/1-first-steps/figures/tokens.svg")
    result = repo.check()
    assert result.exit_code == 1, result.output
    assert f"course/{CHAPTER}:" in result.output and "tokens.svg" in result.output
