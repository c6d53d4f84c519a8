"""Bad input through the command line: a located diagnostic and exit 1 (or a usage error,
exit 2, for configuration), never `internal error`, never CK000, and nothing changed on disk."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "course"
CH = "course/I/1-first-steps"
CHAPTER = f"{CH}/chapter.yaml"
LESSON = f"{CH}/lessons/tokens.md"
PROBLEM = f"{CH}/problems/count-tokens/problem.yaml"
LOCATED = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>CK\d{3}) ", re.M)


@dataclass
class Outcome:
    code: int
    output: str

    def located(self, code: str) -> list[tuple[str, int, int]]:
        """(path, line, column) of every text-format diagnostic with this code."""
        return [
            (m["path"], int(m["line"]), int(m["col"]))
            for m in LOCATED.finditer(self.output)
            if m["code"] == code
        ]


def cli(cwd: Path, *args: str) -> Outcome:
    """`coursekit ARGS` in process from `cwd`; fails on a crash, a traceback or CK000."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "internal error" not in result.output, result.output
    assert "Traceback" not in result.output, result.output
    assert not LOCATED.search(result.output) or "CK000" not in result.output, result.output
    return Outcome(result.exit_code, result.output)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (the cache folder aside): to show that nothing changed."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".coursekit_cache" not in p.parts
    }


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r} is not there exactly once"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the golden course in its own git repository, with `[tool.coursekit]`."""
    root = tmp_path / "project"
    shutil.copytree(GOLDEN, root / "course")
    (root / ".git").mkdir()  # a repository's root is where the search for a project stops
    (root / "pyproject.toml").write_text("[tool.coursekit]\n", encoding="utf-8")
    return root
