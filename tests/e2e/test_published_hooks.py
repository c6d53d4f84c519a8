"""The published hooks (.pre-commit-hooks.yaml) under real pre-commit and real git.

A separate repository holds a copy of the golden course and adopts `coursekit-check-files` as
published: the same `entry` arguments, `files`, `always_run`, `pass_filenames` and
`require_serial`, run as `language: system` with the coursekit under test (so no environment is
built; `test_precommit.py::test_try_repo_runs_the_published_hook` builds the published
`language: python` one). One repository walks through the cases in turn: add, edit, delete and
rename, each refused while it breaks the course and let through once it does not.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]
from test_precommit import GitRepo, commit_and_install, environment

from helpers import CHAPTER, GOLDEN, LESSON

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HOOK = "coursekit-check-files"
PASSED = re.compile(r"coursekit check \(changed course files\)\.+Passed")
FAILED = re.compile(r"coursekit check \(changed course files\)\.+Failed")
CH = "course/" + CHAPTER
LS = "course/" + LESSON
NEW = LS.replace("tokens.md", "positions.md")


def published_config() -> str:
    """The published hook, verbatim but for `language: system` and this coursekit's entry."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == HOOK]
    words = shlex.split(hook["entry"])
    assert words[0] == "coursekit"
    entry = shlex.join([sys.executable, "-m", "coursekit", *words[1:]])
    local = {**hook, "entry": entry, "language": "system"}
    local.pop("minimum_pre_commit_version", None)
    return str(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}, sort_keys=False))


def commit(repo: GitRepo, message: str) -> subprocess.CompletedProcess[str]:
    return repo.run("git", "commit", "-m", message)


def refused(repo: GitRepo, message: str, *expected: str) -> None:
    head = repo.head()
    result = commit(repo, message)
    assert result.returncode != 0, f"{message}: committed\n{result.stdout}"
    assert FAILED.search(result.stdout), result.stdout
    for text in expected:
        assert re.search(text, result.stdout), f"{message}: no {text!r} in\n{result.stdout}"
    assert repo.head() == head


def accepted(repo: GitRepo, message: str) -> None:
    head = repo.head()
    result = commit(repo, message)
    assert result.returncode == 0, f"{message}: refused\n{result.stdout}"
    assert PASSED.search(result.stdout), result.stdout
    assert repo.head() != head


def lesson_text(title: str, extra: str = "") -> str:
    return f"---\ntitle: {title}\nstrand: basics\nreading_time: 3\n{extra}---\n\nPlain prose.\n"


def test_add_edit_delete_rename_through_the_published_hook(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo", environment(tmp_path))
    repo.path.mkdir()
    shutil.copytree(GOLDEN, repo.path / "course")
    (repo.path / ".gitignore").write_text(".coursekit_cache/\n", encoding="utf-8")
    (repo.path / ".pre-commit-config.yaml").write_text(published_config(), encoding="utf-8")
    commit_and_install(repo)
    chapter = repo.path / CH
    listed = "  - lesson: tokens\n"
    assert listed in chapter.read_text(encoding="utf-8")

    # A commit that touches no course file runs the hook, which has nothing to say.
    (repo.path / "NOTES.md").write_text("notes\n", encoding="utf-8")
    repo.ok("git", "add", "NOTES.md")
    result = commit(repo, "notes")
    assert result.returncode == 0, result.stdout

    # add: a new lesson with an unknown key is refused at its line; fixed, it goes through.
    (repo.path / NEW).write_text(lesson_text("Positions", "strnad: basics\n"), encoding="utf-8")
    repo.edit(CH, listed, listed + "  - lesson: positions\n")
    repo.ok("git", "add", NEW, CH)
    refused(repo, "add a lesson", rf"{re.escape(NEW)}:\d+:\d+: CK103 .*strnad")
    (repo.path / NEW).write_text(lesson_text("Positions"), encoding="utf-8")
    repo.ok("git", "add", NEW)
    accepted(repo, "add a lesson")

    # edit: a broken link in a lesson is refused; undone, the tree is as it was.
    repo.edit(NEW, "Plain prose.", "See [the lesson on order](lesson:I.1/ordr).")
    repo.ok("git", "add", NEW)
    refused(repo, "edit a lesson", rf"{re.escape(NEW)}:\d+:\d+: CK501 ")
    repo.edit(NEW, "See [the lesson on order](lesson:I.1/ordr).", "See [order](lesson:I.1/order).")
    repo.ok("git", "add", NEW)
    accepted(repo, "edit a lesson")

    # delete: `git rm` of a listed lesson passes no file name; the manifest is reported.
    repo.ok("git", "rm", "-q", NEW)
    refused(repo, "delete a lesson", rf"{re.escape(CH)}:\d+:\d+: CK109 .*positions\.md")
    repo.ok("git", "reset", "-q", "--hard")

    # rename: `git mv` passes only the new name; the manifest still lists the old one.
    moved = NEW.replace("positions.md", "places.md")
    repo.ok("git", "mv", NEW, moved)
    refused(repo, "rename a lesson", rf"{re.escape(CH)}:\d+:\d+: CK109 .*positions\.md")
    repo.edit(CH, "  - lesson: positions\n", "  - lesson: places\n")
    repo.ok("git", "add", CH)
    accepted(repo, "rename a lesson")

    # delete, done right: the file and its listing go together.
    repo.ok("git", "rm", "-q", moved)
    repo.edit(CH, "  - lesson: places\n", "")
    repo.ok("git", "add", CH)
    accepted(repo, "delete a lesson")
    assert repo.ok("git", "status", "--porcelain").strip() == ""
    assert repo.coursekit("check", "--no-exec").returncode == 0
