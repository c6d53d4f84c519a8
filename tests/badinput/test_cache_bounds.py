"""The cache reads no file whole (a large asset is keyed by stat) and follows no symbolic link
out of the project."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from .conftest import CH, LESSON, cli

GIB = 1 << 30


def check_under_memory_limit(project: Path, limit_bytes: int) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "coursekit", "check", "--no-exec"],
        cwd=project,
        capture_output=True,
        preexec_fn=limit,
        timeout=120,
    )


def test_a_1_gib_sparse_figure_does_not_make_the_cached_check_read_it(project: Path) -> None:
    with open(project / CH / "figures" / "huge.bin", "wb") as handle:
        handle.truncate(GIB)  # sparse: a gigabyte of size, no gigabyte of disk
    started = time.monotonic()
    done = check_under_memory_limit(project, GIB // 2)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr.decode()
    assert b"All checks passed." in done.stdout
    assert elapsed < 20  # hashing it whole took 10-40 s
    again = check_under_memory_limit(project, GIB // 2)  # warm: replayed from the cache
    assert again.returncode == 0 and again.stdout == done.stdout


def test_a_large_file_changed_in_place_is_not_served_stale(project: Path) -> None:
    """Keyed by stat, a large file's edit still changes the key (its size or its ctime)."""
    big = project / LESSON
    big.write_bytes(b"x" * (5 * 1024 * 1024))  # over the 4 MiB cap: CK102
    first = cli(project, "check", "--no-exec")
    assert first.code == 1 and "5.0 MiB" in first.output
    big.write_bytes(b"x" * (6 * 1024 * 1024))
    second = cli(project, "check", "--no-exec")
    assert "6.0 MiB" in second.output


def test_a_cache_folder_that_is_a_symlink_is_not_followed(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / ".coursekit_cache").symlink_to(outside, target_is_directory=True)
    for _ in range(2):
        result = cli(project, "check", "--no-exec")
        assert result.code == 0 and "All checks passed." in result.output
    assert list(outside.iterdir()) == []


def test_a_symlink_planted_inside_the_cache_is_not_followed(project: Path, tmp_path: Path) -> None:
    assert cli(project, "check", "--no-exec").code == 0  # creates the cache
    runs = project / ".coursekit_cache" / "v1" / "runs"
    outside = tmp_path / "outside"
    outside.mkdir()
    for index in range(80):  # more than the runs kept: pruning must not reach these
        (outside / f"{index:02d}.json").write_text("{}", encoding="utf-8")
    for entry in runs.iterdir():
        entry.unlink()
    runs.rmdir()
    runs.symlink_to(outside, target_is_directory=True)
    (project / "course" / "note.txt").write_text("a change, so the run is not replayed\n")
    result = cli(project, "check", "--no-exec")
    assert result.code == 0
    assert sorted(p.name for p in outside.iterdir()) == [f"{i:02d}.json" for i in range(80)]
    assert all(os.path.getsize(p) == 2 for p in outside.iterdir())
