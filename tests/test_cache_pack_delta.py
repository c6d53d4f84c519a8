"""The pack's delta (coursekit.cache_pack): a run that changed few entries writes those beside
the pack, not the pack again, and the next run still reads exactly the entries it used."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit import cache, cache_pack, incremental
from coursekit.cache_pack import DELTA, PACK, PackedStore
from helpers import pack_folder
from test_cache_pack import BUNDLED, _check, _edit


def _served(root: Path) -> dict[str, Any]:
    """What the next run reads: the pack with its delta."""
    return PackedStore(cache.DiskStore(root))._entries()


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name / "course"
    shutil.copytree(BUNDLED, target)
    return target


def test_an_edit_writes_what_changed_beside_the_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = _copy(tmp_path, "delta")
    folder = pack_folder(course.parent)
    _check(course)
    whole = (folder / PACK).read_bytes()
    assert not (folder / DELTA).exists()
    for n in range(3):
        _edit(course, n)
        assert _check(course) == _check(course, use_cache=False)
        assert (folder / PACK).read_bytes() == whole, "an edit wrote the whole pack again"
        assert (folder / DELTA).stat().st_size < len(whole) / 4
    # Exactly the entries a pack written whole would hold after the same runs.
    monkeypatch.setattr(cache_pack, "DELTA_MIN", 0)
    monkeypatch.setattr(cache_pack, "DELTA_SHARE", 10**9)  # no change is ever small enough
    again = _copy(tmp_path, "whole")
    _check(again)
    for n in range(3):
        _edit(again, n)
        _check(again)
    assert not (pack_folder(again.parent) / DELTA).exists()
    assert _untimed(_served(course.parent)) == _untimed(_served(again.parent))
    assert _served(course.parent)["yaml"]


def _sets(entries: dict[str, Any]) -> dict[str, Any]:
    return {key: sorted(used) if isinstance(used, dict) else used for key, used in entries.items()}


def _untimed(value: Any) -> Any:
    """Entries without how long a verdict took (each copy's sympy work timed its own), and
    without when each set of options was used (`incremental.SETS_NAMESPACE`: the sets alone)."""
    if isinstance(value, dict):
        if isinstance(value.get(incremental.SETS_NAMESPACE), dict):
            value = {**value, incremental.SETS_NAMESPACE: _sets(value[incremental.SETS_NAMESPACE])}
        return {k: _untimed(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _store(root: Path) -> PackedStore:
    return PackedStore(cache.DiskStore(root))


def test_a_run_that_changed_much_writes_the_pack_again(tmp_path: Path) -> None:
    first = _store(tmp_path)
    for n in range(300):
        first.put("ns", f"k{n}", n)
    assert first.save()
    folder = pack_folder(tmp_path)
    small = _store(tmp_path)
    for n in range(300):
        assert small.get("ns", f"k{n}") == n
    small.put("ns", "k0", "changed")
    assert small.save()
    assert (folder / DELTA).is_file()
    large = _store(tmp_path)
    for n in range(300):
        large.put("ns", f"k{n}", -n)  # every entry changed: the pack itself is written
    assert large.save()
    assert not (folder / DELTA).exists()
    assert _served(tmp_path) == {"ns": {f"k{n}": -n for n in range(300)}}


def test_a_delta_for_another_pack_is_not_read(tmp_path: Path) -> None:
    first = _store(tmp_path)
    first.put("ns", "a", 1)
    first.put("ns", "b", 2)
    assert first.save()
    edit = _store(tmp_path)
    assert edit.get("ns", "a") == 1
    edit.put("ns", "b", 3)  # a delta: b changed
    assert edit.save()
    folder = pack_folder(tmp_path)
    delta = (folder / DELTA).read_bytes()
    other = _store(tmp_path / "elsewhere")  # another run's pack, written whole meanwhile
    other.put("ns", "a", 10)
    assert other.save()
    shutil.copy(pack_folder(tmp_path / "elsewhere") / PACK, folder / PACK)
    (folder / DELTA).write_bytes(delta)
    assert _served(tmp_path) == {"ns": {"a": 10}}  # the old delta names the old pack


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1],
        lambda data: data[: len(data) // 2],
        lambda data: b"not a delta",
        lambda data: data.replace(b"ns", b"nz", 1),
    ],
    ids=["crc cut", "half", "garbage", "one byte"],
)
def test_a_damaged_delta_leaves_the_pack(tmp_path: Path, damage: Any) -> None:
    first = _store(tmp_path)
    first.put("ns", "a", 1)
    assert first.save()
    edit = _store(tmp_path)
    assert edit.get("ns", "a") == 1
    edit.put("ns", "b", 2)
    assert edit.save()
    path = pack_folder(tmp_path) / DELTA
    path.write_bytes(damage(path.read_bytes()))
    assert _served(tmp_path) == {"ns": {"a": 1}}


KEYS = [f"k{n}" for n in range(6)]
RUN = st.tuples(
    st.sets(st.sampled_from(KEYS)),  # read from what the last run left
    st.dictionaries(st.sampled_from(KEYS), st.integers(0, 3) | st.lists(st.integers(0, 2))),
    st.sets(st.sampled_from(KEYS)),  # declined (a result not to keep)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(RUN, min_size=1, max_size=6), st.integers(0, 3))
def test_the_next_run_reads_exactly_what_the_last_one_used(
    tmp_path_factory: pytest.TempPathFactory, runs: list[Any], minimum: int
) -> None:
    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache_pack, "DELTA_MIN", minimum)
        patch.setattr(cache_pack, "DELTA_SHARE", 2)
        for read, put, declined in runs:
            store = _store(root)
            used: dict[str, Any] = {}
            for key in read:
                value = store.get("ns", key)
                if value is not None:
                    used[key] = value
            for key, value in put.items():
                store.put("ns", key, value)
                used[key] = value
            for key in declined:
                store.decline("ns", key, "a clock")
                used.pop(key, None)
            assert store.save()
            assert _served(root).get("ns", {}) == used


@pytest.mark.parametrize("planted", ["link", "folder"])
def test_a_delta_that_is_not_a_file_of_ours_is_neither_read_nor_followed(
    tmp_path: Path, planted: str
) -> None:
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not the cache's")
    root = tmp_path / "project"
    first = _store(root)
    first.put("ns", "a", 1)
    assert first.save()
    path = pack_folder(root) / DELTA
    if planted == "link":
        path.symlink_to(outside)
    else:
        path.mkdir()
    edit = _store(root)
    assert edit.get("ns", "a") == 1
    edit.put("ns", "b", 2)
    assert edit.save()  # the pack is written whole instead
    assert outside.read_bytes() == b"not the cache's"
    assert not path.is_symlink()
    assert _served(root) == {"ns": {"a": 1, "b": 2}}
