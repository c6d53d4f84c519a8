"""The real pre-commit, in a temporary git repository holding a copy of the course.

The hooks are this repository's own coursekit hooks (from .pre-commit-config.yaml), pointed at
the coursekit of the interpreter running the tests; `try-repo` exercises the published ones
(.pre-commit-hooks.yaml, at this repository's HEAD).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from coursekit.rules import REGISTRY
from helpers import coursekit_tables

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CHAPTER = "course/II/2-from-recurrence-to-attention/chapter.yaml"
LESSON = "course/II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"
CLAIMED = re.compile(r"\[(\d[\d,]*)\]\{claim=[\w-]+\}")


def pre_commit() -> list[str]:
    beside = Path(sys.executable).with_name("pre-commit")
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "pre_commit"]


def local_hooks() -> str:
    """This repository's coursekit hooks, each calling `sys.executable -m coursekit ...`."""
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = []
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            if not hook["id"].startswith("coursekit-"):
                continue
            words = shlex.split(hook["entry"])
            last = len(words) - 1 - words[::-1].index("coursekit")
            args = words[last + 1 :]
            entry = shlex.join([sys.executable, "-m", "coursekit", *args])
            hooks.append({**hook, "entry": entry, "language": "system"})
    assert {h["id"] for h in hooks} >= {"coursekit-check-files", "coursekit-schema"}
    dumped: str = yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)
    return dumped


@dataclass
class GitRepo:
    path: Path
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args,
            cwd=self.path,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )

    def ok(self, *args: str) -> str:
        result = self.run(*args)
        assert result.returncode == 0, f"{shlex.join(args)}:\n{result.stdout}"
        return result.stdout

    def head(self) -> str:
        return self.ok("git", "rev-parse", "HEAD").strip()

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.path / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    def commit(self, *paths: str) -> subprocess.CompletedProcess[str]:
        self.ok("git", "add", "--", *paths)
        return self.run("git", "commit", "-m", f"edit {' '.join(paths)}")

    def coursekit(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "coursekit", *args)


def environment(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT")) and key != "GITHUB_ACTIONS"
    }
    (home / "gitconfig").write_text("", encoding="utf-8")
    env.update(
        PRE_COMMIT_HOME=str(home / "pre-commit-home"),
        PRE_COMMIT_COLOR="never",
        GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A committed copy of the course with the hooks installed (built once per module)."""
    home = tmp_path_factory.mktemp("e2e-home")
    repo = GitRepo(home / "repo", environment(home))
    repo.path.mkdir()
    shutil.copytree(REPO / "course", repo.path / "course")
    shutil.copy2(REPO / ".gitignore", repo.path / ".gitignore")
    config = coursekit_tables((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    if config:
        (repo.path / "pyproject.toml").write_text(config, encoding="utf-8")
    (repo.path / ".pre-commit-config.yaml").write_text(local_hooks(), encoding="utf-8")
    repo.ok(sys.executable, "-m", "coursekit", "schema")
    commit_and_install(repo)
    # As in an author's checkout: the course was checked before, so its cache holds the verdicts
    # of what the tests leave untouched (what a test changes misses the cache: keyed by content).
    repo.ok(sys.executable, "-m", "coursekit", "check")
    return repo


def commit_and_install(repo: GitRepo) -> None:
    """`git init`, commit everything there (without hooks), then `pre-commit install`."""
    repo.ok("git", "init", "-q", "-b", "main")
    repo.ok("git", "config", "user.name", "Course Author")
    repo.ok("git", "config", "user.email", "author@example.invalid")
    repo.ok("git", "config", "commit.gpgsign", "false")
    repo.ok("git", "add", "-A")
    repo.ok("git", "commit", "-q", "--no-verify", "-m", "the course")
    repo.ok(*pre_commit(), "install")


@pytest.fixture
def repo(template: GitRepo, tmp_path: Path) -> Iterator[GitRepo]:
    copy = GitRepo(tmp_path / "repo", template.env)
    shutil.copytree(template.path, copy.path, symlinks=True)
    yield copy


def require_clean(repo: GitRepo, *paths: str) -> None:
    """Skip when the course as copied already has findings in these files."""
    baseline = repo.coursekit("check", *paths)
    if baseline.returncode != 0:
        pytest.skip(f"the course copy already fails in {', '.join(paths)}:\n{baseline.stdout}")


def test_hook_is_installed(repo: GitRepo) -> None:
    hook = (repo.path / ".git" / "hooks" / "pre-commit").read_text(encoding="utf-8")
    assert "pre_commit" in hook


def test_clean_commit_goes_through(repo: GitRepo) -> None:
    require_clean(repo, LESSON)
    before = repo.head()
    with (repo.path / LESSON).open("a", encoding="utf-8") as handle:
        handle.write("\nOne more sentence of plain prose, with no maths in it.\n")
    result = repo.commit(LESSON)
    assert result.returncode == 0, result.stdout
    assert re.search(r"coursekit check \(changed course files\)\.+Passed", result.stdout)
    assert repo.head() != before


def test_unknown_key_is_refused_with_the_diagnostic(repo: GitRepo) -> None:
    before = repo.head()
    repo.edit(CHAPTER, "\nstatus:", "\nstatsu:")
    result = repo.commit(CHAPTER)
    assert result.returncode != 0, result.stdout
    assert re.search(r"coursekit check \(changed course files\)\.+Failed", result.stdout)
    assert f"{CHAPTER}:" in result.stdout
    assert "CK103" in result.stdout and "statsu" in result.stdout
    assert repo.head() == before


def test_broken_apparatus_link_is_refused(repo: GitRepo) -> None:
    assert "CK301" in REGISTRY  # the rule exists: a missing one must fail here, not skip
    before = repo.head()
    repo.edit(CHAPTER, "  - id: 0.LA.03\n", "  - id: 0.LA.99\n")
    result = repo.commit(CHAPTER)
    assert result.returncode != 0, result.stdout
    assert re.search(rf"{re.escape(CHAPTER)}:\d+:\d+: CK301 .*0\.LA\.99", result.stdout), (
        result.stdout
    )
    assert repo.head() == before


def test_changed_quoted_number_is_refused(repo: GitRepo) -> None:
    assert any(code.startswith("CK8") for code in REGISTRY)
    text = (repo.path / LESSON).read_text(encoding="utf-8")
    match = CLAIMED.search(text)
    assert match is not None, f"{LESSON} quotes no number tied to a claim ([N]{{claim=...}})"
    number = match.group(1)
    changed = number[:-1] + str((int(number[-1]) + 1) % 10)
    before = repo.head()
    repo.edit(LESSON, match.group(0), match.group(0).replace(number, changed, 1))
    result = repo.commit(LESSON)
    assert result.returncode != 0, result.stdout
    assert re.search(rf"{re.escape(LESSON)}:\d+:\d+: CK8\d\d ", result.stdout), result.stdout
    assert repo.head() == before


def published_solution(repo: GitRepo) -> tuple[str, str, str] | None:
    """A problem manifest, and the first numeric line of its published solution, changed."""
    for manifest in sorted((repo.path / "course").rglob("problems/*/problem.yaml")):
        text = manifest.read_text(encoding="utf-8")
        solution = text.find("\nsolution:")
        found = re.compile(r"^(\s+value:\s*)(-?\d+(?:\.\d+)?)\s*$", re.M).search(text, solution)
        if solution >= 0 and found:
            value = found.group(2)
            changed = found.group(1) + value[:-1] + str((int(value[-1]) + 1) % 10)
            return manifest.relative_to(repo.path).as_posix(), found.group(0), changed
    return None


def test_changed_published_solution_is_refused(repo: GitRepo) -> None:
    assert any(code.startswith("CK9") for code in REGISTRY)
    found = published_solution(repo)
    assert found is not None, "the course has no worked problem with a numeric published solution"
    manifest, old, new = found
    before = repo.head()
    repo.edit(manifest, old, new)
    result = repo.commit(manifest)
    assert result.returncode != 0, result.stdout
    assert re.search(rf"{re.escape(manifest)}:\d+:\d+: CK9\d\d ", result.stdout), result.stdout
    assert repo.head() == before


def test_stale_schemas_are_refused(repo: GitRepo) -> None:
    schema = next((repo.path / "schemas").glob("*.json"))
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = repo.commit(schema.relative_to(repo.path).as_posix())
    assert result.returncode != 0, result.stdout
    assert re.search(r"coursekit schema \(schemas/ up to date\)\.+Failed", result.stdout)
    assert "stale" in result.stdout


def test_try_repo_runs_the_published_hook(repo: GitRepo) -> None:
    """`pre-commit try-repo` builds the published hook's env from this repository's HEAD.

    The hook runs the coursekit committed at HEAD; the test compares its verdict with the
    coursekit under test, so it assumes the two agree on this course (they do once committed).
    """
    manifest = repo.run("git", "-C", str(REPO), "cat-file", "-e", "HEAD:.pre-commit-hooks.yaml")
    if manifest.returncode != 0:
        pytest.skip(f"{REPO} has no committed .pre-commit-hooks.yaml (try-repo clones HEAD)")
    head = repo.run("git", "-C", str(REPO), "rev-parse", "HEAD").stdout.strip()
    direct = repo.coursekit("check")
    # --ref: the committed tree, as another repository gets it by rev (without it, try-repo
    # would fold this checkout's uncommitted edits into a shadow commit).
    # PIP_COMPILE=0 (pip's --no-compile): the hook's env skips byte-compiling sympy and numpy,
    # a third of the install's time; the hook then compiles only what it imports.
    result = subprocess.run(
        [*pre_commit(), "try-repo", str(REPO), "coursekit-check", "--ref", head, "--all-files"],
        cwd=repo.path,
        env={**repo.env, "PIP_COMPILE": "0"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    verdict = "Passed" if direct.returncode == 0 else "Failed"
    assert re.search(rf"coursekit check \(whole course\)\.+{verdict}", result.stdout), result.stdout
    assert result.returncode == direct.returncode, result.stdout
