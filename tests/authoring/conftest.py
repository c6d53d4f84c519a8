"""A fresh copy of the real course (comments and all) for every test that edits files."""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cache_files import CACHE_DIR
from coursekit.cli import main
from coursekit.engine import check
from coursekit.options import Options
from coursekit.project import Project, find_project
from helpers import SharedVerdicts

REPO = Path(__file__).resolve().parents[2]
REAL_COURSE = REPO / "course"
II2 = "course/II/2-from-recurrence-to-attention"


def _copy_project(target: Path) -> None:
    shutil.copytree(REAL_COURSE, target / "course")
    (target / "pyproject.toml").write_text('[project]\nname = "copy"\n', encoding="utf-8")


@pytest.fixture(scope="session")
def checked_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `.coursekit_cache/` a `coursekit check` of the untouched course leaves behind.

    Each copy starts from it, as an author's checkout does: the commands under test then
    verify afresh only what the test changed (the cache is keyed by content; its own tests,
    tests/test_cache*.py, start cold)."""
    root = tmp_path_factory.mktemp("checked")
    _copy_project(root)
    result = CliRunner().invoke(main, ["check", "--course", str(root / "course")])
    assert result.exit_code == 0, result.output
    return root / CACHE_DIR


@pytest.fixture
def project_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checked_cache: Path
) -> Iterator[Path]:
    _copy_project(tmp_path)
    shutil.copytree(checked_cache, tmp_path / CACHE_DIR)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def project(root: Path) -> Project:
    return find_project(root)


def diagnostics(root: Path) -> set[tuple[str, str, str]]:
    """(code, path, message) of every diagnostic: lines move when lines are added."""
    result = check(project(root), options=Options(exec=False), store=SharedVerdicts())
    return {(d.code, d.path, d.message) for d in result.diagnostics}


def added_only(old: str, new: str) -> list[str]:
    """The lines `new` adds to `old`; fails if any line of `old` changed or went missing."""
    matcher = difflib.SequenceMatcher(
        a=old.splitlines(True), b=new.splitlines(True), autojunk=False
    )
    added: list[str] = []
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        assert tag in ("equal", "insert"), (
            f"{tag} of old lines {a1 + 1}-{a2}: {old.splitlines()[a1:a2]}"
        )
        if tag == "insert":
            added.extend(new.splitlines(True)[b1:b2])
    return added


def changed_lines(old: str, new: str) -> list[tuple[str, str]]:
    """(old line, new line) pairs for a same-length edit; fails if the line count changed."""
    a, b = old.splitlines(True), new.splitlines(True)
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


def run(*args: str) -> tuple[int, str]:
    """`coursekit ARGS` in process: (exit code, output); an exception other than exit fails."""
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root/course, by path: to show what a command wrote, or that it wrote nothing."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted((root / "course").rglob("*"))
        if p.is_file()
    }
