"""The tree digest's stat table: a tree none of whose folders moved is known without listing one.

Regression (#20): every run after an edit listed all ~10,000 folders of a 1,000-chapter course
and stat-ed its ~18,000 files (~0.2 s) to find the one file that changed.
"""

from __future__ import annotations

import ast
import functools
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from coursekit import cache_stats, cache_tree, forked, warm_recent, warm_stamps
from coursekit.cache_files import sha256
from coursekit.cache_tree import TreeDigest, read_table

TICK = 0.02  # past the file system clock's tick (a few ms): two changes never share a stamp
C_STAMPS = warm_stamps.native_stamps  # (None where coursekit._stamps was not built)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test twice, the stamps taken in Python and in C (`cache_stats._held_in_c`), but
    those that count Python's stats and forks (they ask for `python_stamps`) and those of the
    C stamps alone (`c_stamps`)."""
    if "stamps_in" in metafunc.fixturenames:
        kinds = ["python", "c"]
        if "python_stamps" in metafunc.fixturenames:
            kinds = ["python"]
        elif "c_stamps" in metafunc.fixturenames:
            kinds = ["c"]
        metafunc.parametrize("stamps_in", kinds, indirect=True)


@pytest.fixture(autouse=True)
def stamps_in(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    kind: str = request.param
    if kind == "python":
        monkeypatch.setattr(warm_stamps, "native_stamps", None)
    elif C_STAMPS is None and not os.environ.get("COURSEKIT_REQUIRE_C_STAMPS"):
        pytest.skip("coursekit._stamps was not built (no compiler at install)")
    return kind


@pytest.fixture
def python_stamps() -> None:
    """(A test that counts Python's `os.lstat`s or forks: `pytest_generate_tests`.)"""


@pytest.fixture
def c_stamps(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Each list of paths the C stamps are asked for (a test of the C stamps alone)."""
    asked: list[bytes] = []
    real = C_STAMPS
    assert real is not None

    def recording(joined: bytes) -> bytes:
        asked.append(joined)
        return real(joined)

    monkeypatch.setattr(warm_stamps, "native_stamps", recording)
    return asked


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change within two seconds of a table is read again whatever its stamp (git's racy
    rule); these tests wait a tick instead of two seconds, so that window is shut here."""
    monkeypatch.setattr(cache_stats, "RACY_NS", 0)


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every folder a digest listed."""
    seen: list[str] = []
    real = os.scandir

    def counting(path: Any) -> Any:
        if not isinstance(path, int):  # (shutil.rmtree lists by descriptor)
            seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def _tree(root: Path) -> Path:
    for chapter in ("I/1-a", "I/2-b", "II/1-c"):
        (root / chapter / "lessons").mkdir(parents=True)
        (root / chapter / "chapter.yaml").write_text(f"id: {chapter}\n", encoding="utf-8")
        for lesson in ("one", "two"):
            (root / chapter / "lessons" / f"{lesson}.md").write_text(lesson, encoding="utf-8")
    (root / "course.yaml").write_text("title: t\n", encoding="utf-8")
    time.sleep(TICK)
    return root


def _look(root: Path, table: Path) -> tuple[TreeDigest, str | None]:
    """The digest's look at the tree (its table saved), and the tree's hash."""
    digest = TreeDigest(root, table)
    found = digest.compute()
    digest.save()
    time.sleep(TICK)
    return digest, found


def _from_nothing(root: Path, tmp_path: Path) -> str | None:
    return TreeDigest(root, tmp_path / "none.bin").compute()


def test_an_edit_in_place_lists_no_folder(tmp_path: Path, listed: list[str]) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    assert listed  # the first look lists every folder
    lesson = root / "I/2-b/lessons/two.md"
    lesson.write_text("two, edited", encoding="utf-8")
    listed.clear()
    again, found = _look(root, table)
    assert listed == []
    assert list(again.edited) == ["I/2-b/lessons/two.md"]
    assert again.edited["I/2-b/lessons/two.md"] is not None  # the digest it had before
    assert found == _from_nothing(root, tmp_path)
    assert again.folders == {"I", "I/1-a", "I/1-a/lessons", "I/2-b", "I/2-b/lessons", "II"} | {
        "II/1-c",
        "II/1-c/lessons",
    }


@pytest.mark.parametrize(
    "change",
    ["add a file", "remove a file", "rename a file", "add a folder", "remove a folder"],
)
def test_a_folder_that_moved_is_listed_again(
    tmp_path: Path, change: str, listed: list[str]
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _, first = _look(root, table)
    lessons = root / "II/1-c/lessons"
    if change == "add a file":
        (lessons / "three.md").write_text("three", encoding="utf-8")
    elif change == "remove a file":
        (lessons / "one.md").unlink()
    elif change == "rename a file":
        (lessons / "one.md").rename(lessons / "uno.md")
    elif change == "add a folder":
        (lessons / "figures").mkdir()
    else:
        shutil.rmtree(lessons)
    listed.clear()
    _, again = _look(root, table)
    if change != "remove a folder":  # (a folder gone: every folder is listed)
        assert listed[0] == str(lessons) and len(listed) <= 2  # it, and a folder added to it
    assert again != first
    assert again == _from_nothing(root, tmp_path)


def test_a_file_replaced_by_a_link_makes_the_tree_unsafe(tmp_path: Path) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    lesson = root / "I/1-a/lessons/one.md"
    link = root / "I/1-a/lessons/.one.tmp"
    link.symlink_to(root / "course.yaml")
    os.replace(link, lesson)  # a link where the file was, under its name
    assert TreeDigest(root, table).compute() is None


def test_a_folder_changed_just_before_the_table_is_listed_again(
    tmp_path: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the racy window a folder's unchanged stamp proves nothing: it is listed."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    monkeypatch.setattr(cache_stats, "RACY_NS", 3_600 * 10**9)  # everything is recent
    listed.clear()
    _look(root, table)
    assert listed


def test_the_table_holds_each_folders_stamp(tmp_path: Path) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    rows = read_table(table)
    assert rows is not None
    folders = {key for key in rows["files"] if key.endswith("/")}
    assert folders == {"/", "I/", "I/1-a/", "I/1-a/lessons/", "I/2-b/", "I/2-b/lessons/"} | {
        "II/",
        "II/1-c/",
        "II/1-c/lessons/",
    }
    assert all(rows["files"][key][5] == "" for key in folders)


@pytest.mark.parametrize("inside", [False, True], ids=["run elsewhere", "run in the project"])
def test_random_changes_give_what_a_look_from_nothing_gives(
    tmp_path: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch, inside: bool
) -> None:
    if inside:  # the course's paths are stat-ed relative to the working directory
        monkeypatch.chdir(tmp_path)
    rng = random.Random(20)
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    unlisted = 0
    for step in range(40):
        files = sorted(p for p in root.rglob("*") if p.is_file())
        folders = sorted(p for p in root.rglob("*") if p.is_dir())
        kind = rng.choice(["edit", "edit", "save", "add", "remove", "rename", "mkdir", "tree"])
        if kind == "edit" or not files:
            target = rng.choice(files) if files else root / "new.md"
            target.write_text(f"step {step}", encoding="utf-8")
        elif kind == "save":  # an editor's safe write: a new file renamed over the old
            target = rng.choice(files)
            (target.parent / ".saving").write_text(f"step {step}", encoding="utf-8")
            os.replace(target.parent / ".saving", target)
        elif kind == "tree":
            below = rng.choice(folders or [root]) / f"t{step}" / "inner"
            below.mkdir(parents=True)
            (below / "deep.md").write_text("deep", encoding="utf-8")
        elif kind == "add":
            (rng.choice(folders or [root]) / f"f{step}.md").write_text("x", encoding="utf-8")
        elif kind == "remove":
            rng.choice(files).unlink()
        elif kind == "rename":
            source = rng.choice(files)
            source.rename(source.with_name(f"r{step}.md"))
        else:
            (rng.choice(folders or [root]) / f"d{step}").mkdir()
        time.sleep(TICK)
        listed.clear()
        _, again = _look(root, table)
        unlisted += not listed
        if kind in ("save", "add", "rename", "mkdir"):  # (no folder gone) the one that moved
            assert len(listed) <= 2, (step, kind, listed)
        assert again == _from_nothing(root, tmp_path), (step, kind)
    assert unlisted >= 5  # the edits in place were answered without listing a folder


def test_below_the_working_directory_the_tree_is_stat_ed_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python_stamps: None
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    (root / "I/1-a/lessons/one.md").write_text("edited", encoding="utf-8")
    time.sleep(TICK)
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    real = os.lstat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.append(os.fsdecode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    _, found = _look(root, table)
    monkeypatch.setattr(os, "lstat", real)
    assert found == _from_nothing(root, tmp_path)
    assert "course/I/1-a/lessons/one.md" in seen and "course/I/1-a/lessons" in seen
    assert not [path for path in seen if path.startswith(f"{root}/")]


@pytest.mark.parametrize(
    ("base", "cwd", "near"),
    [
        ("/p/course", "/p", "course"),
        ("/p", "/p", "."),
        ("/pq/course", "/p", "/pq/course"),  # a sibling sharing the folder's name's start
        ("/elsewhere/course", "/p", "/elsewhere/course"),
        ("/p/course", "/", "p/course"),
    ],
)
def test_a_course_below_the_working_directory_is_named_relative_to_it(
    monkeypatch: pytest.MonkeyPatch, base: str, cwd: str, near: str
) -> None:
    monkeypatch.setattr(os, "getcwd", lambda: cwd)
    assert cache_stats.near(base) == near


def test_a_save_by_rename_lists_the_folder_it_saved_in_alone(
    tmp_path: Path, listed: list[str]
) -> None:
    """An editor that saves by writing a new file and renaming it over the old one moves the
    folder it saves in: that folder is listed again, not the ~10,000 of a 1,000-chapter course
    (~0.15 s of every such edit's run)."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    first, _ = _look(root, table)
    working = root / "II/1-c/lessons"
    saved = working / ".one.md.swp"
    saved.write_text("one, saved by rename", encoding="utf-8")
    os.replace(saved, working / "one.md")
    time.sleep(TICK)
    listed.clear()
    again, found = _look(root, table)
    assert listed == [str(working)]
    assert again.edited == {"II/1-c/lessons/one.md": first.files["II/1-c/lessons/one.md"]}
    assert found == _from_nothing(root, tmp_path)
    assert again.folders == first.folders


def test_a_folder_new_since_the_table_is_walked_whole(tmp_path: Path, listed: list[str]) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    problem = root / "I/1-a/problems/crossing"
    problem.mkdir(parents=True)
    (problem / "problem.yaml").write_text("id: crossing\n", encoding="utf-8")
    time.sleep(TICK)
    listed.clear()
    again, found = _look(root, table)
    assert sorted(listed) == sorted(str(root / f) for f in ("I/1-a", "I/1-a/problems", problem))
    assert again.edited == {"I/1-a/problems/crossing/problem.yaml": None}
    assert found == _from_nothing(root, tmp_path)
    assert {"I/1-a/problems", "I/1-a/problems/crossing"} <= again.folders


def test_a_link_in_a_folder_that_moved_makes_the_tree_unsafe(tmp_path: Path) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    (root / "I/2-b/lessons/three.md").symlink_to(root / "course.yaml")
    time.sleep(TICK)
    assert TreeDigest(root, table).compute() is None


def test_a_table_saved_and_let_go_of_answers_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`save(release=True)` (a miss, before the run) writes the table and drops its rows; what
    the digest answers afterwards (its files and folders, what was edited, whether something
    was just edited) is what a digest holding them answers, and the table is the same."""
    root = _tree(tmp_path / "course")
    table, other = (
        tmp_path / ".coursekit_cache" / "table.bin",
        tmp_path / ".coursekit_cache" / "other.bin",
    )
    _look(root, table)
    (root / "I/1-a/lessons/one.md").write_text("one, edited", encoding="utf-8")
    holding, releasing = TreeDigest(root, table), TreeDigest(root, other)
    assert holding.compute() == releasing.compute(read_table(table))
    # the racy window is a constant of a run: one second, the edit within it, from here on
    monkeypatch.setattr(cache_stats, "RACY_NS", 10**9)
    releasing.save(release=True)
    assert releasing.edited == holding.edited == {"I/1-a/lessons/one.md": sha256(b"one")}
    assert (releasing.files, releasing.folders) == (holding.files, holding.folders)
    now = time.time_ns()
    assert releasing.recent(now) and holding.recent(now)
    for later in (now + 10**8, now + 10**12):
        assert releasing.recent(later) == holding.recent(later)
    assert not releasing.recent(now + 10**12)
    holding.save()
    written, kept = read_table(table), read_table(other)
    assert written is not None and kept is not None and written["files"] == kept["files"]
    os.remove(other)
    releasing.save()  # nothing more to write: the rows were written once, then let go of
    assert not other.exists()


def _halves(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked child compares the second half of the files from two files on (not 8,192)."""
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)


def _edited_in_half(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int) -> Path:
    """The tree looked at once, then its `index`th file edited in place, with a child to
    compare half the files."""
    root = _tree(tmp_path / "course")
    _look(root, tmp_path / ".coursekit_cache" / "table.bin")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    files[index].write_text("edited in place", encoding="utf-8")
    _halves(monkeypatch)
    return files[index]


@pytest.mark.parametrize("index", range(10))
def test_a_child_comparing_half_the_files_finds_the_edit_in_either_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, python_stamps: None
) -> None:
    path = _edited_in_half(tmp_path, monkeypatch, index)
    root, table = tmp_path / "course", tmp_path / ".coursekit_cache" / "table.bin"
    stats: list[str] = []
    real = os.lstat
    parent = os.getpid()

    def counted(path: Any) -> Any:
        if os.getpid() == parent:
            stats.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "lstat", counted)
    again, found = _look(root, table)
    assert list(again.edited) == [str(path.relative_to(root))]
    assert found == _from_nothing(root, tmp_path)
    # the run stat-ed every folder, the first half of the files and the edited file again
    inside = f"{root}/"
    files_here = [p for p in stats if p.startswith(inside) and not os.path.isdir(p)]
    assert len(files_here) <= 10 // 2 + 1, files_here


def test_the_child_reads_the_table_and_answers_before_it_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (#20): the run read the whole stat table before it forked (~15 ms at 1,000
    chapters of the path it waits on, and ~14 MB of its peak), so that the child could answer
    with what changed from it. The run now reads only the table's first record; the child
    reads the table and answers with every file's digest and every folder, and the run takes
    that while the child writes the table back (`save` waits for it; letting go of the rows
    does not)."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    (root / "I/2-b/lessons/two.md").write_text("two, edited", encoding="utf-8")
    (root / "I/3-new").mkdir()
    (root / "I/3-new/chapter.yaml").write_text("id: new\n", encoding="utf-8")
    (root / "II/1-c/lessons/one.md").unlink()
    alone = TreeDigest(root, tmp_path / "none.bin")
    expected = alone.compute()
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    parent, answers, read_here = os.getpid(), [], []
    real_answer, real_save, real_read = (
        TreeDigest._computed_for_parent,
        TreeDigest.save,
        cache_tree.read_table,
    )

    def answering(self: TreeDigest, *args: Any) -> Any:
        answer = real_answer(self, *args)
        (tmp_path / "answer").write_text(repr(answer[1:3]), encoding="utf-8")
        return answer

    def slow_save(self: TreeDigest, release: bool = False) -> None:
        if os.getpid() != parent:  # the child, once it has answered
            time.sleep(0.8)
        real_save(self, release)

    def reading(path: Path) -> Any:
        if os.getpid() == parent:
            read_here.append(path)
        return real_read(path)

    monkeypatch.setattr(TreeDigest, "_computed_for_parent", answering)
    monkeypatch.setattr(TreeDigest, "save", slow_save)
    monkeypatch.setattr(cache_tree, "read_table", reading)
    before = table.stat().st_mtime_ns
    helped = TreeDigest(root, table)
    started = time.monotonic()
    assert helped.compute(meanwhile=lambda: answers.append(1), changed_ns=NEW) == expected
    helped.save(release=True)  # (the run goes on)
    assert time.monotonic() - started < 0.6  # not after the child's table
    assert table.stat().st_mtime_ns == before  # still being written
    assert read_here == []
    files, folders = ast.literal_eval((tmp_path / "answer").read_text(encoding="utf-8"))
    assert (files, set(folders)) == (alone.files, alone.folders)
    # in path order: the run's load bisects them sorted, and sorts the files once more in a
    # pass (sorting 28,000 paths in the run took ~7 ms at 1,000 chapters)
    assert list(files) == sorted(files) and folders == sorted(folders)
    assert helped.folders_in_order == folders and helped.folders == set(folders)
    assert "II/1-c/lessons/one.md" not in helped.files and "I/3-new" in helped.folders
    assert helped.edited.keys() == {"I/2-b/lessons/two.md", "I/3-new/chapter.yaml"}
    assert helped.edited["I/3-new/chapter.yaml"] is None  # (a file the table did not list)
    assert helped.edited["I/2-b/lessons/two.md"] is not None
    helped.save()  # waits for the child's table
    written = real_read(table)
    assert written is not None and "I/3-new/chapter.yaml" in written["files"]
    assert "II/1-c/lessons/one.md" not in written["files"]


@pytest.mark.parametrize("edited", ["a recent file", "an older file"])
def test_with_no_change_known_the_tables_recent_paths_say_whether_to_send_it_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str
) -> None:
    """With no warm record for the command line (an author who never ran an unchanged check),
    the warm path knows of no change: the table names its most recently changed paths, and an
    edit among them (the file edited last, again) sends the digest ahead to a child."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    monkeypatch.setattr(cache_tree, "RECENT", 3)
    recent = root / "I/2-b/lessons/two.md"
    recent.write_text("two, edited", encoding="utf-8")
    _look(root, table)
    read = warm_recent.decode(table.with_name(warm_recent.NAME).read_bytes())
    assert read is not None
    named = [os.fsdecode(path).removeprefix(f"{root}/") for path, _stamp in read[1]]
    assert len(named) == 3
    assert named[0] == "I/2-b/lessons/two.md"
    assert "I/1-a/lessons/one.md" not in named  # (written first)
    target = recent if edited == "a recent file" else root / "I/1-a/lessons/one.md"
    target.write_text("edited again", encoding="utf-8")
    expected = _from_nothing(root, tmp_path)
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    work: list[int] = []  # done meanwhile: only while a child takes the digest
    again = TreeDigest(root, table)
    assert again.compute(meanwhile=lambda: work.append(1)) == expected
    assert list(again.edited) == [str(target.relative_to(root))]
    # (a lookup that may hit does not wait for a child's whole digest)
    assert work == ([1] if edited == "a recent file" else [])


def test_recent_paths_larger_than_the_warm_path_reads_are_no_change_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup reads the recent paths within the warm path's limit (`warm_recent.MAX_BYTES`):
    past it, the file is no change known, and nothing is sent ahead."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    recent = root / "I/2-b/lessons/two.md"
    recent.write_text("two, edited", encoding="utf-8")
    _look(root, table)
    recent.write_text("edited again", encoding="utf-8")
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    for short, sent in [(0, [1]), (1, [])]:
        size = table.with_name(warm_recent.NAME).stat().st_size
        monkeypatch.setattr(warm_recent, "MAX_BYTES", size - short)
        work: list[int] = []
        assert TreeDigest(root, table).compute(meanwhile=functools.partial(work.append, 1))
        assert work == sent, short
        recent.write_text(f"edited again, {short}", encoding="utf-8")


@pytest.mark.parametrize("failure", ["no fork", "the child fails"])
def test_a_child_that_does_not_answer_leaves_the_comparison_to_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str, python_stamps: None
) -> None:
    path = _edited_in_half(tmp_path, monkeypatch, -1)
    root, table = tmp_path / "course", tmp_path / ".coursekit_cache" / "table.bin"
    if failure == "no fork":

        def refused() -> int:
            raise OSError("no process to spare")

        monkeypatch.setattr(os, "fork", refused)
    else:
        parent, real = os.getpid(), cache_stats.compared

        def failing(*args: Any) -> bool:
            if os.getpid() != parent:
                raise RuntimeError("the child fails")
            return real(*args)

        monkeypatch.setattr(cache_stats, "compared", failing)
    again, found = _look(root, table)
    assert list(again.edited) == [str(path.relative_to(root))]
    assert found == _from_nothing(root, tmp_path)


@pytest.mark.parametrize("index", range(10))
def test_the_c_stamps_find_the_edit_in_either_half_with_a_second_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, c_stamps: list[bytes]
) -> None:
    path = _edited_in_half(tmp_path, monkeypatch, index)
    monkeypatch.setattr(warm_stamps, "THREADS_FROM", 2)
    monkeypatch.setattr(warm_stamps, "spare_processor", lambda: True)
    threads: list[object] = []
    real_start = sys.modules["_thread"].start_new_thread

    def counting(function: Any, args: Any) -> Any:
        threads.append(function)
        return real_start(function, args)

    monkeypatch.setattr("_thread.start_new_thread", counting)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("a child forked for the stamps"))
    root, table = tmp_path / "course", tmp_path / ".coursekit_cache" / "table.bin"
    c_stamps.clear()
    again, found = _look(root, table)
    assert list(again.edited) == [str(path.relative_to(root))]
    assert found == _from_nothing(root, tmp_path)
    assert len(threads) == 2  # the folders' half, the files' half
    asked = [p for joined in c_stamps for p in joined.split(b"\0")]
    assert len(asked) == len(set(asked)) == 9 + 10  # every folder and file once


def test_no_thread_takes_c_stamps_where_the_caller_holds_the_other_processor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, c_stamps: list[bytes]
) -> None:
    """The child that takes the digest for a run compares with `split` false: the run is
    busy on the other processor meanwhile, and a second thread would only contend with it."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    monkeypatch.setattr(warm_stamps, "THREADS_FROM", 2)
    monkeypatch.setattr(warm_stamps, "spare_processor", lambda: True)
    monkeypatch.setattr("_thread.start_new_thread", lambda *_: pytest.fail("a thread started"))
    rows = read_table(table)
    assert rows is not None
    surveyed = cache_stats.survey(str(root), rows["files"], rows["written_ns"], split=False)
    assert surveyed is not None and not surveyed[0] and not surveyed[3]  # nothing moved
    assert len(c_stamps) == 2  # the folders in one call, the files in another


def test_the_c_stamps_are_asked_for_paths_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, c_stamps: list[bytes]
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    monkeypatch.chdir(tmp_path)
    c_stamps.clear()
    _, found = _look(root, table)
    asked = [p for joined in c_stamps for p in joined.split(b"\0")]
    assert b"course/I/1-a/lessons/one.md" in asked and b"course/I/1-a/lessons" in asked
    assert all(p == b"course" or p.startswith(b"course/") for p in asked)
    assert found == _from_nothing(root, tmp_path)


def test_a_table_path_holding_a_nul_is_looked_at_from_nothing(tmp_path: Path) -> None:
    """A stat table is written from file names, which hold no NUL; one that does (a forged
    table) is no table: the tree is listed, in either way of taking the stamps."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache" / "table.bin"
    _look(root, table)
    rows = read_table(table)
    assert rows is not None
    rows["files"]["I/1-a/lessons/one\0.md"] = rows["files"]["I/1-a/lessons/one.md"]
    assert TreeDigest(root, table).compute(table=rows) == _from_nothing(root, tmp_path)


# The digest taken by a child while the run does something else ---------------------------------


NEW = 2**62  # a change newer than any table (the warm path's newest stamp)


def _changed(root: Path, change: str) -> None:
    lessons = root / "II/1-c/lessons"
    if change == "edit in place":
        (root / "I/2-b/lessons/two.md").write_text("two, edited", encoding="utf-8")
    elif change == "save by rename":
        (lessons / ".one.md.saving").write_text("one, saved", encoding="utf-8")
        os.replace(lessons / ".one.md.saving", lessons / "one.md")
    elif change == "remove a folder":
        shutil.rmtree(lessons)
    elif change == "a link":
        (root / "I/1-a/lessons/link.md").symlink_to(root / "course.yaml")


@pytest.mark.parametrize(
    "change", ["nothing", "edit in place", "save by rename", "remove a folder", "a link"]
)
def test_a_child_taking_the_digest_while_the_run_works_finds_what_the_run_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Regression (#20): at 1,000 chapters the run stat-ed ~28,000 paths (~0.1 s) and then
    imported what a miss needs (~0.13 s), one after the other, while the second processor
    idled. A child now takes the digest while the run imports: the same digest, the same
    files, folders and edits, the same table written back, and no course path stat-ed here."""
    root = _tree(tmp_path / "course")
    table, alone = tmp_path / ".coursekit_cache/table.bin", tmp_path / ".coursekit_cache/alone.bin"
    _look(root, table)
    _look(root, alone)
    _changed(root, change)
    by_itself = TreeDigest(root, alone)
    expected = by_itself.compute()
    by_itself.save()
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    stats: list[str] = []
    real, parent, work = os.lstat, os.getpid(), []

    def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() == parent and os.fspath(path).startswith(f"{root}/"):
            stats.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counted)
    helped = TreeDigest(root, table)
    assert helped.compute(meanwhile=lambda: work.append(os.getpid()), changed_ns=NEW) == expected
    assert work == [parent]
    assert stats == []
    for name in ("files", "folders", "edited", "safe"):
        assert getattr(helped, name) == getattr(by_itself, name), name
    helped.save()  # nothing left to write: the child wrote the table
    written, kept = read_table(table), read_table(alone)
    if expected is None:  # an unsafe tree: no table written
        return
    assert written is not None and kept is not None
    assert written["files"].keys() == kept["files"].keys()
    assert {k: row[5] for k, row in written["files"].items()} == {
        k: row[5] for k, row in kept["files"].items()
    }


@pytest.mark.parametrize("failure", ["no fork", "the child fails"])
def test_a_child_that_does_not_answer_leaves_the_digest_to_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    _changed(root, "edit in place")
    expected = _from_nothing(root, tmp_path)
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    parent, work = os.getpid(), []
    if failure == "no fork":

        def refused() -> int:
            raise OSError("no process to spare")

        monkeypatch.setattr(os, "fork", refused)
    else:
        real = TreeDigest._computed_for_parent

        def failing(self: TreeDigest, *args: Any) -> Any:
            if os.getpid() != parent:
                raise RuntimeError("the child fails")
            return real(self, *args)

        monkeypatch.setattr(TreeDigest, "_computed_for_parent", failing)
    again = TreeDigest(root, table)
    assert again.compute(meanwhile=lambda: work.append(1), changed_ns=NEW) == expected
    assert list(again.edited) == ["I/2-b/lessons/two.md"]
    assert work == ([] if failure == "no fork" else [1])  # no child: the caller does it later
    again.save()
    written = read_table(table)
    assert written is not None and "I/2-b/lessons/two.md" in written["files"]


def test_a_failure_meanwhile_is_raised_once_the_child_is_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    stopped: list[int] = []
    real = forked.discard

    def discard(child: tuple[int, int], kill: bool = False) -> None:
        stopped.append(child[0])
        real(child, kill)

    monkeypatch.setattr(forked, "discard", discard)

    def failing() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        TreeDigest(root, table).compute(meanwhile=failing, changed_ns=NEW)
    assert len(stopped) == 1
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(stopped[0], os.WNOHANG)


def test_a_small_tree_takes_its_digest_here_and_leaves_the_work_to_the_caller(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    _look(root, table)
    work: list[int] = []
    assert TreeDigest(root, table).compute(meanwhile=lambda: work.append(1), changed_ns=NEW)
    assert work == []  # (fewer than SPLIT_FROM files: no child)


def test_changes_the_last_run_saw_take_the_digest_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change older than the table (the warm path's newest stamp among the files it found
    changed) was seen by the run that wrote it, and with no change known the lookup may hit
    as well: its stored output is then the answer, and a child's whole digest would only
    delay it. A newer change sends the work ahead."""
    root = _tree(tmp_path / "course")
    table = tmp_path / ".coursekit_cache/table.bin"
    lesson = root / "I/2-b/lessons/two.md"
    lesson.write_text("two, edited", encoding="utf-8")
    seen_by_it = lesson.stat().st_mtime_ns
    time.sleep(TICK)
    _look(root, table)
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 2)
    work: list[int] = []
    again = TreeDigest(root, table)
    assert again.compute(meanwhile=lambda: work.append(1), changed_ns=seen_by_it) is not None
    assert again.compute(meanwhile=lambda: work.append(1)) is not None  # no change known
    assert work == []
    lesson.write_text("two, edited again", encoding="utf-8")
    newer = lesson.stat().st_mtime_ns
    again = TreeDigest(root, table)
    found = again.compute(meanwhile=lambda: work.append(1), changed_ns=newer)
    assert work == [1]
    assert found == _from_nothing(root, tmp_path)
    assert list(again.edited) == ["I/2-b/lessons/two.md"]
