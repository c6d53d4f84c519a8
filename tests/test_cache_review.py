"""Review findings on the run cache: inputs the tree digest missed, and what it must survive."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from helpers import generate

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    generate(2, tmp_path)
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


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]


@pytest.mark.parametrize(
    "damage",
    [
        lambda stamp: {"written_ns": "x", "files": {}},
        lambda stamp: {"written_ns": None, "files": {}},
        lambda stamp: {"written_ns": [], "files": {}},
        lambda stamp: {"written_ns": 0, "files": {"course.yaml": 5}},
        lambda stamp: {"written_ns": 0, "files": {"course.yaml": None}},
        lambda stamp: {"written_ns": 2**62, "files": {"course.yaml": stamp}},
        lambda stamp: {"written_ns": 2**62, "files": {"course.yaml": [*stamp, None]}},
    ],
)
def test_a_damaged_stat_table_is_a_miss_not_a_crash(
    project: Path, damage: Callable[[list[int]], object]
) -> None:
    from coursekit.cache_tree import STAT_TABLE, read_table, write_table

    truth = _check(project, "--no-cache")
    assert _check(project) == truth
    table = project / ".coursekit_cache/v1" / STAT_TABLE
    assert read_table(table) is not None
    damaged = damage(_stamp(project / "course/course.yaml"))
    assert isinstance(damaged, dict)
    assert write_table(table, damaged)
    assert _check(project) == truth
    assert _check(project) == truth


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_a_file_name_that_is_not_utf8_does_not_crash_the_cached_run(project: Path) -> None:
    folder = os.fsencode(project / "course/I/1-synthetic-chapter-1/figures")
    with open(os.path.join(folder, b"caf\xe9.svg"), "wb") as handle:
        handle.write(b"<svg/>")
    truth = _check(project, "--no-cache")
    assert truth[0] in (0, 1), truth
    assert _check(project) == truth
    assert _check(project) == truth


def test_the_stat_table_is_a_few_records_of_many_rows(tmp_path: Path) -> None:
    """A row per record cost a Python loop over every file on each read (~18,000 at 1,000
    chapters); the rows go in dicts of `ROWS_PER_RECORD`, read back exactly."""
    from coursekit.cache_files import read_records
    from coursekit.cache_tree import ROWS_PER_RECORD, TABLE_MAGIC, read_table, write_table

    files = {f"I/{n}/lesson.md": [n, n, 10, n, 1, f"{n:064x}"] for n in range(10_000)}
    path = tmp_path / ".coursekit_cache" / "v1" / "stat-table.bin"
    assert write_table(path, {"written_ns": 7, "files": files})
    records = read_records(path, TABLE_MAGIC)
    assert records is not None
    assert len(records) == 1 + -(-len(files) // ROWS_PER_RECORD)
    assert read_table(path) == {"written_ns": 7, "files": files}
    assert write_table(path, {"written_ns": 7, "files": {}})
    assert read_table(path) == {"written_ns": 7, "files": {}}
