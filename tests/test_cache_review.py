"""Review findings on the run cache: inputs the tree digest missed, and what it must survive."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main

REPO = Path(__file__).resolve().parent.parent


def _generate(chapters: int, root: Path) -> None:
    spec = importlib.util.spec_from_file_location("ck_generate", REPO / "benchmarks/generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generate: Callable[[int, Path], Path] = module.generate
    generate(chapters, root)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    _generate(2, tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.coursekit]\n", encoding="utf-8")
    return tmp_path


def _check(root: Path, *extra: str) -> tuple[int, str]:
    cwd = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["check", "--structural", *extra])
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def test_an_empty_folder_added_or_removed_changes_the_run(project: Path) -> None:
    """A chapter number matching two folders is an error even when one of them is empty."""
    before = _check(project)
    assert _check(project) == before
    extra = project / "course/I/1-extra"
    extra.mkdir()
    added = _check(project)
    assert added == _check(project, "--no-cache")
    assert added != before
    extra.rmdir()
    assert _check(project) == before == _check(project, "--no-cache")
