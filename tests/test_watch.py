"""coursekit.watch: a recursive inotify watch says which paths changed, and when it lost track.

inotify queues an event inside the syscall that causes it, so every test reads `changes()` right
after acting, with no sleeps."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursekit import watch
from coursekit.watch import TreeWatch, WatchUnavailable

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A small tree: a file at the top, a folder with a file, a folder two deep."""
    top = tmp_path / "course"
    (top / "book" / "deep").mkdir(parents=True)
    (top / "index.md").write_text("index\n")
    (top / "book" / "ch1.md").write_text("chapter\n")
    return top


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder on the same file system, outside the watched tree."""
    place = tmp_path / "outside"
    place.mkdir()
    return place


@pytest.fixture
def tw(root: Path) -> Iterator[TreeWatch]:
    with TreeWatch(root) as made:
        yield made


def paths(*parts: Path) -> set[str]:
    return {str(part) for part in parts}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_nothing_happened_is_an_empty_set(tw: TreeWatch) -> None:
    assert tw.changes() == set()
    assert tw.changes() == set()


def test_a_change_is_reported_once(tw: TreeWatch, root: Path) -> None:
    (root / "index.md").write_text("new\n")
    assert tw.changes() == paths(root / "index.md")
    assert tw.changes() == set()


def test_a_file_rewritten_in_a_subfolder(tw: TreeWatch, root: Path) -> None:
    (root / "book" / "ch1.md").write_text("rewritten\n")
    assert tw.changes() == paths(root / "book" / "ch1.md")


def test_a_file_appended(tw: TreeWatch, root: Path) -> None:
    with (root / "index.md").open("a") as file:
        file.write("more\n")
    assert tw.changes() == paths(root / "index.md")


def test_times_and_modes(tw: TreeWatch, root: Path) -> None:
    os.utime(root / "index.md", (1, 1))
    assert tw.changes() == paths(root / "index.md")
    os.chmod(root / "book" / "ch1.md", 0o600)
    assert tw.changes() == paths(root / "book" / "ch1.md")


def test_a_file_created_then_deleted(tw: TreeWatch, root: Path) -> None:
    (root / "book" / "deep" / "new.md").write_text("x")
    assert tw.changes() == paths(root / "book" / "deep" / "new.md")
    (root / "index.md").unlink()
    assert tw.changes() == paths(root / "index.md")


def test_a_rename_within_the_tree_names_both_paths(tw: TreeWatch, root: Path) -> None:
    os.rename(root / "index.md", root / "book" / "deep" / "moved.md")
    assert tw.changes() == paths(root / "index.md", root / "book" / "deep" / "moved.md")


def test_a_file_moved_out_and_one_moved_in(tw: TreeWatch, root: Path, outside: Path) -> None:
    os.rename(root / "book" / "ch1.md", outside / "ch1.md")
    assert tw.changes() == paths(root / "book" / "ch1.md")
    (outside / "arrival.md").write_text("x")
    os.rename(outside / "arrival.md", root / "arrival.md")
    assert tw.changes() == paths(root / "arrival.md")


def test_files_written_into_a_brand_new_folder_are_seen(tw: TreeWatch, root: Path) -> None:
    new = root / "a" / "b"
    new.mkdir(parents=True)  # `a` gets its watch only in changes(): `b` and `f` come before it
    (new / "f").write_text("x")
    assert tw.changes() == paths(root / "a", new, new / "f")
    (new / "f").write_text("edited")
    assert tw.changes() == paths(new / "f")


def test_a_folder_moved_in_is_listed_and_watched(tw: TreeWatch, root: Path, outside: Path) -> None:
    (outside / "pkg" / "sub").mkdir(parents=True)
    (outside / "pkg" / "x.md").write_text("x")
    (outside / "pkg" / "sub" / "y.md").write_text("y")
    os.rename(outside / "pkg", root / "pkg")
    pkg = root / "pkg"
    assert tw.changes() == paths(pkg, pkg / "x.md", pkg / "sub", pkg / "sub" / "y.md")
    (pkg / "sub" / "y.md").write_text("edited")
    (pkg / "sub" / "z.md").write_text("new")
    assert tw.changes() == paths(pkg / "sub" / "y.md", pkg / "sub" / "z.md")


def test_a_folder_removed_with_its_files(tw: TreeWatch, root: Path) -> None:
    shutil.rmtree(root / "book")
    book = root / "book"
    assert tw.changes() == paths(book, book / "ch1.md", book / "deep")
    assert set(tw._paths.values()) == paths(root)  # the ended watches are forgotten
    (root / "index.md").write_text("still watched\n")
    assert tw.changes() == paths(root / "index.md")
    (book / "deep").mkdir(parents=True)  # the same path again: a new folder, watched anew
    assert tw.changes() == paths(book, book / "deep")
    (book / "deep" / "f").write_text("x")
    assert tw.changes() == paths(book / "deep" / "f")


def test_a_folder_moved_away_is_no_longer_watched(tw: TreeWatch, root: Path, outside: Path) -> None:
    os.rename(root / "book", outside / "book")
    assert tw.changes() == paths(root / "book", root / "book" / "deep")
    assert set(tw._paths.values()) == paths(root)
    assert tw._retired == set()  # their IN_IGNORED came and went in the same call
    # Events from its old watches would be an unknown wd, that is None: it must be unwatched.
    (outside / "book" / "ch1.md").write_text("elsewhere")
    (outside / "book" / "deep" / "f").write_text("elsewhere")
    assert tw.changes() == set()


def test_a_folder_renamed_within_the_tree(tw: TreeWatch, root: Path) -> None:
    os.rename(root / "book", root / "volume")
    old, new = root / "book", root / "volume"
    assert tw.changes() == paths(old, old / "deep", new, new / "ch1.md", new / "deep")
    (new / "deep" / "f").write_text("x")
    assert tw.changes() == paths(new / "deep" / "f")


def test_a_link_to_a_folder_is_an_entry_never_followed(
    tw: TreeWatch, root: Path, outside: Path
) -> None:
    os.symlink(outside, root / "link")
    assert tw.changes() == paths(root / "link")
    (outside / "through.md").write_text("x")
    assert tw.changes() == set()


def test_a_link_present_at_the_start_is_not_followed(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "link")
    with TreeWatch(root) as made:
        (outside / "through.md").write_text("x")
        assert made.changes() == set()
        (root / "link").unlink()
        assert made.changes() == paths(root / "link")


def test_the_root_removed_loses_track_for_good(tw: TreeWatch, root: Path) -> None:
    shutil.rmtree(root)
    assert tw.changes() is None
    root.mkdir()
    (root / "index.md").write_text("again")
    assert tw.changes() is None


def test_the_root_renamed_loses_track_for_good(tw: TreeWatch, root: Path, outside: Path) -> None:
    os.rename(root, outside / "renamed")
    assert tw.changes() is None
    (outside / "renamed" / "index.md").write_text("x")
    assert tw.changes() is None


def test_a_crafted_overflow_loses_track(tw: TreeWatch, root: Path) -> None:
    changed: set[str] = set()
    tw._handle([(-1, watch.IN_Q_OVERFLOW, 0, b"")], changed)
    assert tw.changes() is None
    (root / "index.md").write_text("x")
    assert tw.changes() is None


def test_a_real_overflow_loses_track(tw: TreeWatch, root: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"max_queued_events is {limit}: too many events to queue")
    one, two = root / "index.md", root / "book" / "ch1.md"
    for _ in range(limit // 2 + 1):  # alternating files: identical neighbours would be merged
        os.utime(one)
        os.utime(two)
    assert tw.changes() is None


def test_an_unknown_watch_loses_track(tw: TreeWatch) -> None:
    tw._handle([(987_654, watch.IN_MODIFY, 0, b"x.md")], set())
    assert tw.changes() is None


def test_a_new_folder_gone_before_its_watch_is_only_reported(tw: TreeWatch, root: Path) -> None:
    changed: set[str] = set()
    tw._handle([(tw._root_wd, watch.IN_CREATE | watch.IN_ISDIR, 0, b"ghost")], changed)
    assert changed == paths(root / "ghost")
    assert tw.changes() == set()


def test_parse_reads_two_events_and_strips_the_padding() -> None:
    header = struct.Struct("=iIII")
    buffer = header.pack(3, watch.IN_CREATE, 0, 16) + b"ch1.md".ljust(16, b"\0")
    buffer += header.pack(7, watch.IN_MOVED_FROM | watch.IN_ISDIR, 42, 32)
    buffer += "é.md".encode().ljust(32, b"\0")
    buffer += header.pack(-1, watch.IN_Q_OVERFLOW, 0, 0)
    assert watch._parse(buffer) == [
        (3, watch.IN_CREATE, 0, b"ch1.md"),
        (7, watch.IN_MOVED_FROM | watch.IN_ISDIR, 42, "é.md".encode()),
        (-1, watch.IN_Q_OVERFLOW, 0, b""),
    ]
    assert watch._parse(b"") == []


def test_close_twice_and_changes_after_close(root: Path) -> None:
    before = open_fds()
    made = TreeWatch(root)
    assert open_fds() == before + 1
    made.close()
    made.close()
    assert open_fds() == before
    assert made.changes() is None


def test_the_context_manager_closes(root: Path) -> None:
    before = open_fds()
    with TreeWatch(root) as made:
        assert made.changes() == set()
    assert open_fds() == before
    assert made.changes() is None


class FailingLibc:
    """The real libc calls, except one that fails with the given errno."""

    def __init__(self, failing: str, code: int) -> None:
        self._real = watch._libc()
        self._failing = failing
        self._code = code

    def _call(self, name: str, *args: object) -> int:
        if name == self._failing:
            ctypes.set_errno(self._code)
            return -1
        return int(getattr(self._real, name)(*args))

    def inotify_init1(self, flags: int) -> int:
        return self._call("inotify_init1", flags)

    def inotify_add_watch(self, fd: int, path: bytes, mask: int) -> int:
        return self._call("inotify_add_watch", fd, path, mask)

    def inotify_rm_watch(self, fd: int, wd: int) -> int:
        return self._call("inotify_rm_watch", fd, wd)


def test_inotify_that_cannot_start_is_unavailable(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = FailingLibc("inotify_init1", errno.EMFILE)
    monkeypatch.setattr(watch, "_libc", lambda: failing)
    with pytest.raises(WatchUnavailable) as raised:
        TreeWatch(root)
    assert os.strerror(errno.EMFILE) in str(raised.value)
    assert "fs.inotify.max_user_instances" in str(raised.value)


def test_the_watch_limit_is_unavailable_and_named(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = FailingLibc("inotify_add_watch", errno.ENOSPC)
    monkeypatch.setattr(watch, "_libc", lambda: failing)
    before = open_fds()
    with pytest.raises(WatchUnavailable, match=r"fs\.inotify\.max_user_watches") as raised:
        TreeWatch(root)
    assert str(root) in str(raised.value)
    assert open_fds() == before  # the inotify fd was closed


@pytest.mark.parametrize("make", ["missing", "file", "link"])
def test_a_root_that_is_no_folder_is_unavailable(tmp_path: Path, make: str) -> None:
    target = tmp_path / "root"
    if make == "file":
        target.write_text("x")
    elif make == "link":
        (tmp_path / "real").mkdir()
        target.symlink_to(tmp_path / "real")
    with pytest.raises(WatchUnavailable, match="cannot watch"):
        TreeWatch(target)


def test_a_new_folder_that_cannot_be_watched_loses_track(tw: TreeWatch, root: Path) -> None:
    tw._lib = FailingLibc("inotify_add_watch", errno.ENOSPC)  # type: ignore[assignment]
    (root / "new").mkdir()
    assert tw.changes() is None


def test_a_watch_dropped_unclosed_gives_its_descriptor_back(tmp_path: Path) -> None:
    import gc

    watch = TreeWatch(tmp_path)
    fd = watch._fd
    assert os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    del watch
    gc.collect()
    assert not os.path.exists(f"/proc/self/fd/{fd}") or (
        os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify"
    )
