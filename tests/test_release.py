"""The release as other repositories see it: distribution name, URLs, tag and hook ids in docs."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from coursekit import DISTRIBUTION, HOMEPAGE, __version__
from coursekit.report.sarif import information_uri

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SNIPPET = re.compile(r"```yaml\n(repos:\n.*?)```", re.S)


def doc_snippet() -> dict[str, Any]:
    text = (REPO / "docs" / "pre-commit.md").read_text(encoding="utf-8")
    match = SNIPPET.search(text)
    assert match, "docs/pre-commit.md has no `repos:` snippet"
    loaded: dict[str, Any] = yaml.safe_load(match.group(1))
    return loaded


def test_the_distribution_is_ours_and_the_command_stays() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION == "coursekit-lint"
    assert project["version"] == __version__
    # the command is `coursekit`, a script of its own (no console-script wrapper: its `import
    # re` cost ~5 ms of every run); it enters the warm path first (coursekit.__main__), then cli
    assert "scripts" not in project
    assert PYPROJECT["tool"]["setuptools"]["script-files"] == ["bin/coursekit"]
    script = (REPO / "bin" / "coursekit").read_text(encoding="utf-8")
    assert script.startswith("#!python\n")  # the installer writes the interpreter's path
    assert "from coursekit.__main__ import main" in script and "import re" not in script
    assert project["urls"]["Homepage"] == HOMEPAGE


def test_sarif_points_at_this_project_not_the_other_coursekit() -> None:
    uri = information_uri()
    assert uri == HOMEPAGE
    assert "pypi.org/project/coursekit/" not in uri


def test_the_docs_snippet_names_this_releases_tag_and_published_hook_ids() -> None:
    (entry,) = doc_snippet()["repos"]
    assert entry["rev"] == f"v{__version__}"
    published = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    ids = {hook["id"] for hook in published}
    named = [hook["id"] for hook in entry["hooks"]]
    assert named and set(named) <= ids, f"{named} vs published {sorted(ids)}"


def test_the_docs_tag_exists_and_publishes_those_hooks() -> None:
    (entry,) = doc_snippet()["repos"]
    rev = entry["rev"]
    tags = subprocess.run(
        ["git", "tag", "-l", rev], cwd=REPO, capture_output=True, text=True, check=False
    )
    if tags.returncode != 0:
        pytest.skip(f"not a git checkout: {tags.stderr.strip()}")
    if tags.stdout.strip() != rev:
        # The release tag is made on main when this version lands (docs/pre-commit.md).
        pytest.skip(f"tag {rev} not created yet (the release is tagged on main at merge)")
    hooks = subprocess.run(
        ["git", "show", f"{rev}:.pre-commit-hooks.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ids = {hook["id"] for hook in yaml.safe_load(hooks)}
    assert {hook["id"] for hook in entry["hooks"]} <= ids
