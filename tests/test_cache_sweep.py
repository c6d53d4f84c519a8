"""The result store's generations (`coursekit.cache_sweep`): one folder per environment, and
the oldest swept when a new one begins.

Regression (#20): every entry is keyed by the environment's salt, so each upgrade (or edit of
an editable install) wrote a new copy of every result beside the old ones, never read again:
a 1,000-chapter course checked across 17 environments held 127,582 entries (1.2 GB).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from coursekit import cache, cache_sweep
from coursekit.cache_files import FORMAT


def _store(tmp_path: Path) -> Path:
    return tmp_path / ".coursekit_cache" / FORMAT / cache.STORE


def _used(tmp_path: Path, version: str, when: int) -> cache.DiskStore:
    """A store of the environment `version` that wrote an entry, its generation used at `when`."""
    store = cache.DiskStore(tmp_path, env={"coursekit": version})
    store.put("sympy", "k", version)
    os.utime(cache_sweep.generation(_store(tmp_path), store.salt), ns=(when, when))
    return store


def test_each_environment_keeps_its_entries_in_a_folder_of_its_own(tmp_path: Path) -> None:
    first = _used(tmp_path, "1", time.time_ns())
    second = _used(tmp_path, "2", time.time_ns())
    names = sorted(entry.name for entry in _store(tmp_path).iterdir())
    assert names == sorted([first.salt[:16], second.salt[:16]])
    assert cache.DiskStore(tmp_path, env={"coursekit": "1"}).get("sympy", "k") == "1"
    assert cache.DiskStore(tmp_path, env={"coursekit": "2"}).get("sympy", "k") == "2"


def test_a_new_environment_sweeps_all_but_the_most_recently_used(tmp_path: Path) -> None:
    assert cache_sweep.KEEP == 3
    now = time.time_ns()
    # used in the order 1, 2, 3; then 1 again (a second environment used in turn)
    stores = {v: _used(tmp_path, v, now - (10 - n) * 10**9) for n, v in enumerate("123")}
    again = cache.DiskStore(tmp_path, env={"coursekit": "1"})
    again.put("sympy", "k2", "again")  # marks its generation used now
    layout = _store(tmp_path) / "sympy" / "ab"  # the layout before generations
    layout.mkdir(parents=True)
    (layout / "entry.json").write_text("{}", encoding="utf-8")
    assert len(list(_store(tmp_path).iterdir())) == 4  # (swept only when one is made)
    new = _used(tmp_path, "4", now)
    kept = {entry.name for entry in _store(tmp_path).iterdir()}
    # the new one and the two used last before it: 1 (again), 3
    assert kept == {stores[v].salt[:16] for v in "13"} | {new.salt[:16]}
    assert cache.DiskStore(tmp_path, env={"coursekit": "1"}).get("sympy", "k2") == "again"
    assert cache.DiskStore(tmp_path, env={"coursekit": "2"}).get("sympy", "k") is None


def test_a_store_that_only_reads_makes_no_generation(tmp_path: Path) -> None:
    store = cache.DiskStore(tmp_path, env={"coursekit": "1"})
    assert store.get("sympy", "k") is None
    assert not _store(tmp_path).exists()


def test_what_is_not_a_generation_is_swept_but_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the cache's", encoding="utf-8")
    store = _store(tmp_path)
    store.mkdir(parents=True)
    (store / "0123456789abcdef").symlink_to(outside)  # a generation's name, but a link
    (store / "stray.json").write_text("{}", encoding="utf-8")
    removed = cache_sweep.sweep(store, "fedcba9876543210")
    assert removed == ["0123456789abcdef", "stray.json"]
    assert (outside / "keep.txt").exists()
    assert list(store.iterdir()) == []


def test_a_store_reached_through_a_link_is_not_swept(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "0123456789abcdef").mkdir(parents=True)
    (outside / "notes.txt").write_text("not the cache's", encoding="utf-8")
    store = _store(tmp_path)
    store.parent.mkdir(parents=True)
    store.symlink_to(outside)
    cache.DiskStore(tmp_path, env={"coursekit": "1"}).put("sympy", "k", 1)
    assert sorted(entry.name for entry in outside.iterdir()) == ["0123456789abcdef", "notes.txt"]
