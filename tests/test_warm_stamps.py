"""The warm path's stamps: the C module (src/coursekit/_stamps.c) and Python give the same bytes.

Where the module was not built, the tests of it skip and say so, except where
COURSEKIT_REQUIRE_C_STAMPS is set (.ci/run, which builds it): there they fail.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit import warm_stamps

try:
    from coursekit._stamps import lstat_stamps
except ImportError:  # (an install without a compiler)
    if os.environ.get("COURSEKIT_REQUIRE_C_STAMPS"):
        raise
    pytest.skip("coursekit._stamps was not built (no compiler at install)", allow_module_level=True)


def python_stamps(joined: bytes) -> bytes:
    return warm_stamps.packed(warm_stamps.stamps(joined.split(b"\0") if joined else []))


@pytest.fixture
def tree(tmp_path: Path) -> list[bytes]:
    """One path of every kind a course can hold or lose."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "lesson.md").write_text("prose\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "naïve é.md").write_text("x" * 5000)
    (tmp_path / "link").symlink_to(tmp_path / "folder" / "lesson.md")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    names = ["folder", "folder/lesson.md", "empty", "naïve é.md", "link", "dangling"]
    names += ["absent", "empty/under-a-file", "folder/absent/deeper"]
    return [bytes(tmp_path), *(bytes(tmp_path / name) for name in names)]


def test_the_c_stamps_are_pythons(tree: list[bytes]) -> None:
    joined = b"\0".join(tree)
    assert lstat_stamps(joined) == python_stamps(joined)
    flat = warm_stamps.unpacked(lstat_stamps(joined))
    assert flat is not None and len(flat) == 6 * len(tree)
    stamps = [flat[i : i + 6] for i in range(0, len(flat), 6)]
    assert stamps[-3:] == [list(warm_stamps.ABSENT)] * 3  # gone, under a file, under a gone folder
    link = os.lstat(tree[5])  # the link itself, not what it points to
    assert stamps[5] == [link.st_mode, link.st_mtime_ns, link.st_ctime_ns, link.st_size,
                         link.st_ino, link.st_dev]  # fmt: skip


def test_a_change_of_any_kind_changes_the_c_stamps(tree: list[bytes]) -> None:
    joined = b"\0".join(tree)
    before = lstat_stamps(joined)
    lesson = Path(os.fsdecode(tree[2]))
    stat = lesson.stat()
    lesson.write_text("prose!\n")
    os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the mtime put back: ctime moved
    assert lstat_stamps(joined) != before
    assert lstat_stamps(joined) == python_stamps(joined)


@pytest.mark.parametrize("joined", [b"", b"/", b"relative-and-absent", b"\0", b"a\0\0b"])
def test_the_c_stamps_count_paths_as_python_splits_them(joined: bytes) -> None:
    assert lstat_stamps(joined) == python_stamps(joined)
    expected = len(joined.split(b"\0")) if joined else 0
    assert len(lstat_stamps(joined)) == 6 * warm_stamps.STAMP_BYTES * expected


def test_an_error_other_than_absence_raises_as_pythons_does(tmp_path: Path) -> None:
    too_long = bytes(tmp_path / ("x" * 5000))
    with pytest.raises(OSError) as c_error:
        lstat_stamps(b"/\0" + too_long)
    with pytest.raises(OSError) as py_error:
        python_stamps(b"/\0" + too_long)
    assert c_error.value.errno == py_error.value.errno == errno.ENAMETOOLONG
    assert c_error.value.filename == too_long
    with pytest.raises(TypeError):
        lstat_stamps("a str")  # type: ignore[arg-type]


def test_a_loop_of_links_on_the_way_raises(tmp_path: Path) -> None:
    """An error other than absence that root meets too (a folder it cannot search, it never
    does): a path through a loop of links."""
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    looped = bytes(tmp_path / "a" / "f")
    with pytest.raises(OSError) as c_error:
        lstat_stamps(looped)
    with pytest.raises(OSError) as py_error:
        python_stamps(looped)
    assert c_error.value.errno == py_error.value.errno == errno.ELOOP
    assert lstat_stamps(bytes(tmp_path / "a")) == python_stamps(bytes(tmp_path / "a"))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(min_value=0, max_value=(1 << 64) - 1), max_size=12))
def test_numbers_past_2_63_are_kept_as_their_twos_complement(values: list[int]) -> None:
    kept = [v if v < warm_stamps.SIGN else warm_stamps.signed(v) for v in values]
    assert warm_stamps.unpacked(warm_stamps.packed(kept)) == kept
    assert all((k & ((1 << 64) - 1)) == v for k, v in zip(kept, values, strict=True))


def test_the_halves_are_compared_by_a_second_thread_not_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one processor: the halves are compared one after the other")
    monkeypatch.setattr(warm_stamps, "THREADS_FROM", 200)
    monkeypatch.setattr(warm_stamps, "native_stamps", lstat_stamps)
    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    paths = [bytes(tmp_path / f"f{n}") for n in range(600)]
    for path in paths:
        Path(os.fsdecode(path)).write_text("x")
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    threads: list[Callable[[], None]] = []
    started = sys.modules["_thread"].start_new_thread

    def counting(function: Callable[[], None], args: tuple[()]) -> int:
        threads.append(function)
        return int(started(function, args))

    monkeypatch.setattr("_thread.start_new_thread", counting)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    assert warm_stamps.unchanged(parts) and len(threads) == 1
    Path(os.fsdecode(paths[500])).write_text("edited")  # in the second thread's half
    assert not warm_stamps.unchanged(parts)
    assert warm_stamps.newest_change_ns is not None
    assert warm_stamps.newest_change_ns >= os.lstat(paths[500]).st_ctime_ns


def test_no_thread_to_be_had_compares_both_halves_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_stamps, "THREADS_FROM", 200)
    monkeypatch.setattr(warm_stamps, "native_stamps", lstat_stamps)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)

    def no_thread(function: Callable[[], None], args: tuple[()]) -> int:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr("_thread.start_new_thread", no_thread)
    paths = [bytes(tmp_path / f"f{n}") for n in range(600)]
    for path in paths:
        Path(os.fsdecode(path)).write_text("x")
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    assert warm_stamps.unchanged(parts)
    Path(os.fsdecode(paths[500])).unlink()
    assert not warm_stamps.unchanged(parts) and warm_stamps.newest_change_ns is not None


def test_a_record_written_with_the_c_stamps_is_read_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [bytes(tmp_path / f"f{n}") for n in range(100)]
    for path in paths:
        Path(os.fsdecode(path)).write_text("x")
    monkeypatch.setattr(warm_stamps, "native_stamps", lstat_stamps)
    parts = warm_stamps.parts_of(paths, warm_stamps.unpacked(lstat_stamps(b"\0".join(paths))) or [])
    assert warm_stamps.unchanged(parts)
    monkeypatch.setattr(warm_stamps, "native_stamps", None)
    assert warm_stamps.unchanged(parts)
    Path(os.fsdecode(paths[70])).write_text("edited")
    assert not warm_stamps.unchanged(parts)


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A folder nothing else writes to, four folders deep in one of its own (a path of four
    steps up stays inside), holding a file, a folder and a link."""
    top = tmp_path_factory.mktemp("quiet") / "q" / "r" / "s"
    (top / "d").mkdir(parents=True)
    (top / "f").write_text("x")
    (top / "d" / "f").write_text("y")
    (top / "l").symlink_to("d")
    return bytes(top / "d")


STEPS = [b"f", b"d", b"l", b"..", b".", b"", b"absent", b"\xff\xfe", b"x" * 300]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.sampled_from(STEPS), max_size=4).map(b"/".join), max_size=8))
def test_any_paths_are_stamped_or_refused_as_python_does(quiet: bytes, names: list[bytes]) -> None:
    """Paths of any steps (a file, a folder, a link, up, here, nothing, bytes that are no
    UTF-8, a name too long) give C's stamps the same bytes as Python's, or the same error."""
    joined = b"\0".join(quiet + b"/" + name for name in names)
    try:
        expected: bytes | int = python_stamps(joined)
    except OSError as exc:
        expected = exc.errno or -1
    try:
        got: bytes | int = lstat_stamps(joined)
    except OSError as exc:
        got = exc.errno or -1
    assert got == expected


@pytest.mark.parametrize("threads", [False, True], ids=["one thread", "two threads"])
def test_stamps_of_a_list_are_taken_in_c_as_python_takes_them(
    tree: list[bytes], monkeypatch: pytest.MonkeyPatch, threads: bool
) -> None:
    """What a warm record is written from (`cache_warm.save`), a thread taking half of a
    large list; a path holding a NUL is refused as `os.lstat` refuses it."""
    monkeypatch.setattr(warm_stamps, "native_stamps", lstat_stamps)
    monkeypatch.setattr(warm_stamps, "THREADS_FROM", 2 if threads else 10**9)
    monkeypatch.setattr(warm_stamps, "spare_processor", lambda: True)
    started: list[object] = []
    real_start = sys.modules["_thread"].start_new_thread

    def counting(function: Callable[[], None], args: tuple[()]) -> int:
        started.append(function)
        return int(real_start(function, args))

    monkeypatch.setattr("_thread.start_new_thread", counting)
    assert warm_stamps.stamps_of(tree) == warm_stamps.stamps(tree)
    assert len(started) == threads
    with pytest.raises(ValueError):
        warm_stamps.stamps_of([*tree, b"a\0b"])
    monkeypatch.setattr(warm_stamps, "native_stamps", None)
    with pytest.raises(ValueError):
        warm_stamps.stamps_of([*tree, b"a\0b"])
