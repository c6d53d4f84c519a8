"""The session check that tests write only in temporary folders sees what it should."""

from __future__ import annotations

import subprocess
from pathlib import Path

from checkout_guard import untracked


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(".coursekit_cache/\n", encoding="utf-8")
    # Folders the checkout tracks: git names a new file inside them, not the whole folder.
    for folder in ("golden", "pkg"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tracked.txt").write_text("", encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_a_new_ignored_cache_folder_counts(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before = untracked(repo)
    (repo / "golden" / ".coursekit_cache").mkdir()
    (repo / "golden" / ".coursekit_cache" / "results.json").write_text("{}", encoding="utf-8")
    after = untracked(repo)
    assert before is not None and after is not None
    assert after - before == {"golden/.coursekit_cache/"}


def test_tool_caches_do_not_count(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before = untracked(repo)
    for cache in ("__pycache__", ".pytest_cache", ".hypothesis"):
        (repo / "pkg" / cache).mkdir()
        (repo / "pkg" / cache / "x").write_text("", encoding="utf-8")
    assert untracked(repo) == before


def test_outside_git_it_says_so(tmp_path: Path) -> None:
    assert untracked(tmp_path / "nowhere") is None
