"""The course's most recently changed paths beside the stat table (`coursekit.warm_recent`):
an edit after the warm record was written is found in a few stats, not ~14,000."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from coursekit import cache_tree, warm, warm_recent, warm_stamps
from coursekit.cache_tree import TreeDigest

TICK = 0.02  # past the file system clock's tick: two changes never share a stamp


def _stamp(path: Path) -> list[int]:
    st = os.lstat(path)
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]


def _files(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"f{n}.md" for n in range(count)]
    for path in paths:
        path.write_text(path.name, encoding="utf-8")
    return paths


def test_what_it_writes_reads_back_and_anything_else_is_nothing() -> None:
    entries = [(b"/c/a.md", [1, 2, 3, 4, 5]), (b"/c/b/", [6, 7, 8, 9, 10])]
    data = warm_recent.encode(12, entries)
    assert warm_recent.decode(data) == (12, entries)
    for damaged in (data[:-1], data[:20], data.replace(b"a.md", b"x.md"), b"", b"\0" * 64):
        assert warm_recent.decode(damaged) is None
    wrong = warm_recent.encode(12, [(b"/c/a.md", [1, 2, 3])])  # a stamp of another shape
    assert warm_recent.decode(wrong) is None


def test_a_change_since_a_record_is_found_only_where_the_record_watches(tmp_path: Path) -> None:
    paths = _files(tmp_path / "course", 4)
    entries = [(bytes(path), _stamp(path)) for path in paths[:3]]  # f3 is not a recent path
    record_ns = time.time_ns()
    data = warm_recent.encode(record_ns + 1, entries)  # its look began after the record
    file_ns = record_ns + 2
    watched = [b"\0".join(bytes(path) for path in paths[:2]), bytes(paths[2])]
    assert warm_recent.change_since(data, file_ns, record_ns, watched) is None
    time.sleep(TICK)
    paths[3].write_text("not a recent path", encoding="utf-8")
    assert warm_recent.change_since(data, file_ns, record_ns, watched) is None
    paths[1].write_text("edited", encoding="utf-8")
    found = warm_recent.change_since(data, file_ns, record_ns, watched)
    assert found is not None and found >= os.lstat(paths[1]).st_ctime_ns
    assert warm_recent.change_since(data, file_ns, record_ns, watched[1:]) is None  # unwatched
    # a look that began before the record was written says nothing of it
    assert warm_recent.change_since(data, file_ns, record_ns + 2, watched) is None
    paths[2].unlink()  # a recent path gone is a change too
    assert warm_recent.change_since(data, file_ns, record_ns, watched[1:]) is not None


def test_the_stat_table_writes_its_recent_paths_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_tree, "RECENT", 2)
    root = tmp_path / "course"
    paths = _files(root / "I/1-a/lessons", 5)
    table = tmp_path / ".coursekit_cache/v1/stat-table.bin"
    time.sleep(TICK)
    TreeDigest(root, table).compute()
    time.sleep(TICK)
    paths[1].write_text("edited last", encoding="utf-8")
    tree = TreeDigest(root, table)
    tree.compute()
    tree.save()
    written = table.with_name(warm_recent.NAME)
    read = warm_recent.decode(written.read_bytes())
    assert read is not None
    assert read[1][0][0] == bytes(paths[1])
    assert len(read[1]) == 2
    assert dict(read[1])[bytes(paths[1])] == _stamp(paths[1])


@pytest.mark.parametrize("inside", [False, True], ids=["run elsewhere", "run in the project"])
def test_the_warm_path_misses_after_a_few_stats_when_a_recent_path_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inside: bool
) -> None:
    """Regression (#20): an author editing one lesson again and again had each run compare
    every stamp of the record's halves (~14,000 at 1,000 chapters, ~35 ms) before it missed.
    Run in the project, the record names the course's paths relative to it, the stat table's
    recent paths are absolute: they are still found among the record's."""
    from coursekit import cache_warm

    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    if inside:
        monkeypatch.chdir(tmp_path)
    root = tmp_path / "course"
    paths = _files(root / "I/1-a/lessons", 300)
    later = time.time_ns() + 3600 * 10**9  # past every stamp: the record is not racy
    monkeypatch.setattr(warm, "key_material", lambda argv=None: "key")
    watched = [bytes(path) for path in paths]
    assert cache_warm.save(tmp_path, watched, "out\n", 0, now_ns=later)
    time.sleep(TICK)
    tree = TreeDigest(root, tmp_path / ".coursekit_cache/v1/stat-table.bin")
    tree.compute()  # the table's look begins after the record was written
    tree.save()
    edited = paths[150]  # in one of the record's halves, and the table's most recent now
    time.sleep(TICK)
    edited.write_text("edited again", encoding="utf-8")
    tree = TreeDigest(root, tmp_path / ".coursekit_cache/v1/stat-table.bin")
    tree.compute()
    tree.save()
    edited.write_text("and again", encoding="utf-8")
    monkeypatch.setattr(warm, "replayable", lambda argv: True)
    monkeypatch.setattr(warm, "candidates", lambda argv, cwd: [str(tmp_path)])
    real_lstat, stats = os.lstat, []

    def counted(path: bytes | str) -> os.stat_result:
        stats.append(path)
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", counted)
    assert warm.lookup() is None
    assert warm_stamps.newest_change_ns is not None
    assert warm_stamps.newest_change_ns >= real_lstat(edited).st_ctime_ns
    assert len(stats) <= cache_tree.RECENT + 8  # the recent paths and the cache's folders
    (record,) = (tmp_path / warm.FOLDER).iterdir()
    fields = warm.decode(record.read_bytes())
    assert fields is not None
    named = {path for joined, _ in fields[1] for path in joined.split(b"\0")}
    expected = {os.path.relpath(path, tmp_path) if inside else str(path) for path in paths}
    assert named == {os.fsencode(path) for path in expected}


@pytest.mark.parametrize("damage", [None, "garbage", "too large", "a link"])
def test_a_damaged_or_foreign_file_is_no_change_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str | None
) -> None:
    """The record is then compared as before: an unchanged course still replays (and the
    sound file, for comparison, makes it miss)."""
    from coursekit import cache_warm

    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    root = tmp_path / "course"
    paths = _files(root / "I/1-a/lessons", 10)
    monkeypatch.setattr(warm, "key_material", lambda argv=None: "key")
    monkeypatch.setattr(warm, "replayable", lambda argv: True)
    monkeypatch.setattr(warm, "candidates", lambda argv, cwd: [str(tmp_path)])
    later = time.time_ns() + 3600 * 10**9
    assert cache_warm.save(tmp_path, [bytes(path) for path in paths], "out\n", 0, now_ns=later)
    time.sleep(TICK)
    look = time.time_ns()  # after the record was written, before this file is
    entries = [(bytes(paths[0]), [0, 0, 0, 0, 0])]  # a stamp no file has: "changed since"
    if damage == "too large":  # whole and sound, but more than the warm path reads
        count = warm_recent.MAX_BYTES // len(bytes(tmp_path)) + 1  # paths nothing watches
        entries += [(bytes(tmp_path / f"gone-{n}"), [0, 0, 0, 0, 0]) for n in range(count)]
    data = warm_recent.encode(look, entries)
    assert (len(data) > warm_recent.MAX_BYTES) is (damage == "too large")
    recent = tmp_path / ".coursekit_cache/v1" / warm_recent.NAME
    time.sleep(TICK)
    if damage == "garbage":
        recent.write_bytes(data[:-1])
    elif damage == "a link":
        (tmp_path / "elsewhere.bin").write_bytes(data)
        recent.symlink_to(tmp_path / "elsewhere.bin")
    else:
        recent.write_bytes(data)
    assert warm.lookup() == (None if damage is None else ("out\n", 0))


@pytest.mark.parametrize(
    ("joined", "path", "held"),
    [
        (b"a/x\0b/y\0c/z", b"a/x", True),  # first
        (b"a/x\0b/y\0c/z", b"b/y", True),  # between two
        (b"a/x\0b/y\0c/z", b"c/z", True),  # last
        (b"a/x", b"a/x", True),  # alone
        (b"a/xy\0b/y", b"a/x", False),  # the start of another path
        (b"b/y\0za/x", b"a/x", False),  # the end of another path
        (b"", b"a/x", False),
    ],
)
def test_a_part_holds_a_path_only_whole(joined: bytes, path: bytes, held: bool) -> None:
    assert warm_recent._holds(joined, path) is held


@pytest.mark.parametrize(
    ("path", "cwd", "named"),
    [
        (b"/p/course/a.md", b"/p", b"course/a.md"),
        (b"/p", b"/p", b"."),
        (b"/p/", b"/p", b"."),
        (b"/pq/a.md", b"/p", b"/pq/a.md"),  # a sibling sharing the folder's name's start
        (b"/elsewhere/a.md", b"/p", b"/elsewhere/a.md"),
        (b"/p/a.md", b"/", b"p/a.md"),
        (b"/", b"/", b"."),
    ],
)
def test_a_path_below_the_working_directory_is_named_relative_to_it(
    path: bytes, cwd: bytes, named: bytes
) -> None:
    assert warm_recent.relative(path, cwd) == named
    assert warm.below_cwd([path], cwd) == [named]
