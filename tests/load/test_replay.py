"""A chapter's load replayed from a record (coursekit.load.replay): it builds exactly what walking
the chapter builds, and only where nothing below the chapter's folder changed."""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_known_tree import BUNDLED, CHAPTER, SHAPES, _seen, _write

from coursekit.cache import DiskStore
from coursekit.cache_pack import PackedStore
from coursekit.commands.check import run_cached
from coursekit.load import clean, load_course, replay
from coursekit.load.clean import StaleRecord
from coursekit.load.loader import _Loader
from coursekit.model.deferred import (
    DeferredChapter,
    chapter_held,
    chapter_known,
    chapter_paths,
)
from coursekit.model.tree import Chapter
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.store import MemoryStore

LESSON = f"{CHAPTER}/lessons/model-width.md"


def _deep(result: Any) -> tuple[Any, ...]:
    """Everything a load gives, the documents' validated front matter and programs included."""
    course = result.course
    chapters = {}
    for chapter_id, chapter in course.chapters.items():
        # what is known of a replayed chapter's documents before they are made, first
        held = (chapter_held(chapter), chapter_paths(chapter))
        lessons = [
            (k, v.path, v.text, v.body_start, v.body_line, v.meta.model_dump())
            for k, v in chapter.lessons.items()
        ]
        listed = [
            (k, v.path, v.program, v.meta.model_dump())
            for docs in (chapter.problems, chapter.exercises)
            for k, v in docs.items()
        ]
        manifest = chapter.manifest.model_dump()
        where = chapter.manifest.loc("id")
        chapters[chapter_id] = (
            (chapter.dir, chapter.path, chapter.book_id, sorted(chapter.assets)),
            (manifest, where, chapter_known(chapter)),
            lessons,
            listed,
            held,
        )
    return (
        sorted(result.diagnostics),
        chapters,
        dict(course.texts),
        dict(course.digests),
        list(course.failed),
        dict(course.unloaded),
    )


class Counted:
    """How many chapters each load replayed and walked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.replayed: list[str] = []
        self.walked: list[str] = []
        real_replay, real_walk = replay.replay, _Loader.walk_chapter

        def counted_replay(reader: Any, chapter: Any, *args: Any) -> bool:
            done = real_replay(reader, chapter, *args)
            if done:
                self.replayed.append(chapter.dir)
            return done

        def counted_walk(loader: Any, chapter: Any, *args: Any) -> None:
            self.walked.append(chapter.dir)
            real_walk(loader, chapter, *args)

        monkeypatch.setattr(replay, "replay", counted_replay)
        monkeypatch.setattr(_Loader, "walk_chapter", counted_walk)

    def reset(self) -> None:
        self.replayed.clear()
        self.walked.clear()


def _load(course: Path, root: Path, alter: Callable[[PackedStore], None] | None = None) -> Any:
    """A load as `check` makes one: with the tree just digested, the pack saved after it
    (and after `alter` changed the store: the pack keeps what the run used, texts included)."""
    store = PackedStore(DiskStore(root))
    result = load_course(course, root, store, tree=_seen(course, store))
    if alter is not None:
        alter(store)
    store.save()
    return result


def _walked(course: Path, root: Path, alter: Callable[[PackedStore], None] | None = None) -> Any:
    """What a load as `check` makes one finds with no record replayed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(replay, "replay", lambda *args: False)
        return _deep(_load(course, root, alter))


def _copy(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    return course


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_replayed_load_builds_what_walking_builds(
    tmp_path: Path, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = _copy(tmp_path)
    SHAPES[shape](course)
    walked = _walked(course, tmp_path)  # records
    troubled = {d.path.rsplit("/", 1)[0] for d in load_course(course, tmp_path).diagnostics}
    counted = Counted(monkeypatch)
    assert _deep(_load(course, tmp_path)) == walked  # replays
    assert not set(counted.replayed) & set(counted.walked)
    # Every chapter that loaded without a problem is replayed; one that met one is walked.
    for chapter_dir in counted.walked:
        assert any(path.startswith(chapter_dir) for path in troubled), chapter_dir


def test_the_bundled_course_replays_every_chapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = _copy(tmp_path)
    counted = Counted(monkeypatch)
    first = _deep(_load(course, tmp_path))
    assert len(counted.walked) == len(first[1]) and not counted.replayed
    counted.reset()
    assert _deep(_load(course, tmp_path)) == first
    assert not counted.walked
    assert len(counted.replayed) == len(first[1])


def _append(relative: str) -> Callable[[Path], None]:
    def edit(course: Path) -> None:
        path = course / relative
        path.write_text(path.read_text(encoding="utf-8") + "\n# later\n", encoding="utf-8")

    return edit


# Each touches one file or folder below the chapter CHAPTER and nothing else.
CHANGES: dict[str, Callable[[Path], None]] = {
    "a lesson's text": _append(LESSON),
    "a problem's program": lambda c: _append(_program(c))(c),
    "an SVG figure": _append(f"{CHAPTER}/figures/path-length.svg"),
    "an unlisted lesson added": lambda c: _write(c / CHAPTER / "lessons" / "late.md", "---\n---\n"),
    "a listed lesson removed": lambda c: (c / LESSON).unlink(),
    "an asset added deep below": lambda c: _write(c / CHAPTER / "data" / "a" / "b" / "v.csv"),
    "an asset's content": lambda c: _write(c / CHAPTER / "figures" / "path-length.svg", "<svg/>"),
    "the manifest's text alone": _append(f"{CHAPTER}/chapter.yaml"),
    "a lesson dropped from the manifest": lambda c: _drop_item(c / CHAPTER / "chapter.yaml"),
}


def _drop_item(manifest: Path) -> None:
    """The manifest without its item listing the lesson model-width (now unlisted)."""
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if "lesson: model-width" in line)
    manifest.write_text("".join(lines[:at] + lines[at + 1 :]), encoding="utf-8")


def _program(course: Path) -> str:
    programs = sorted((course / CHAPTER / "problems").glob("*/*.py"))
    assert programs, "the bundled chapter has a worked problem with a program"
    return str(programs[0].relative_to(course))


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_below_a_chapter_walks_that_chapter_alone(
    tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = _copy(tmp_path)
    counted = Counted(monkeypatch)
    _load(course, tmp_path)
    CHANGES[change](course)
    counted.reset()
    replayed = _deep(_load(course, tmp_path))
    assert counted.walked == [f"course/{CHAPTER}"]
    assert f"course/{CHAPTER}" not in counted.replayed and counted.replayed
    assert replayed == _walked(course, tmp_path)


@pytest.mark.parametrize(
    ("damaged", "replays"),
    [
        ("as kept", True),  # the control: the texts the replay reads are in the pack
        ("programs not read", False),
        (None, False),
        ([], False),
        ("text", False),
        (["key", [], [], [], []], False),  # another key
        (["KEY", {}, [], [], []], False),
        (["KEY", [1], [], [], []], False),
        (["KEY", [], [["a", "b", "c", 1]], [], []], False),
        (["KEY", [], [], [["a", "b", None, "d"]], []], False),
        (["KEY", [], [], [], [["a", "b"]]], False),
        (["KEY", ["course/elsewhere.md"], [], [], []], False),  # a text outside the chapter
        (["KEY", [f"course/{CHAPTER}/nothing.md"], [], [], []], False),  # one the tree lacks
        # documents the clean record does not vouch for as the record says
        (["KEY", [f"course/{LESSON}"], [["ghost", f"course/{LESSON}", 0, 1]], [], []], False),
        (["KEY", [f"course/{LESSON}"], [], [["p", f"course/{LESSON}", "x.py", None]], []], False),
        (["KEY", [f"course/{LESSON}"], [], [["p", f"course/{LESSON}", None, None]], []], False),
        # what is known of the manifest, in another shape
        (["KNOWN", None], False),
        (["KNOWN", ["II.2", [[], [], []], [], []]], False),  # a part missing
        (["KNOWN", [2, [[], [], []], [], [], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], []], [], [], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[1], [], []], [], [], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], ["1"], []], [], [], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], "0.IT.01", [], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], [["d", "m", 0]], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], [["d", "m"]], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], ["dmx"], "draft", [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], [["d", 1, False]], "draft", [[], [], []]]], False),
        (
            [
                "KNOWN",
                ["II.2", [[], [], []], [], [["d", "m", False], ["e", "n"]], "draft", [[]] * 3],
            ],
            False,
        ),
        (["KNOWN", ["II.2", [[], [], []], [], [["d", "m", False]], "draft", [[], [], {}]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], [], None, [[], [], []]]], False),
        (["KNOWN", ["II.2", [[], [], []], [], [], "draft", [[1], [], []]]], False),
    ],
)
def test_a_damaged_or_stale_record_is_a_walk(
    tmp_path: Path, damaged: Any, replays: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = _copy(tmp_path)
    name = replay.entry(f"course/{CHAPTER}")

    def damage(store: PackedStore) -> None:
        kept = store.get(replay.NAMESPACE, name)
        assert isinstance(kept, list)
        value = damaged
        if damaged == "as kept":
            value = kept
        elif damaged == "programs not read":
            value = [kept[0], [p for p in kept[1] if not p.endswith(".py")], *kept[2:]]
        elif isinstance(damaged, list) and damaged[:1] == ["KEY"]:
            value = [kept[0], *damaged[1:], kept[5]]  # (the documents' parts damaged)
        elif isinstance(damaged, list) and damaged[:1] == ["KNOWN"]:
            value = [*kept[:5], damaged[1]]  # (what is known of the manifest damaged)
        store.put(replay.NAMESPACE, name, value)

    walked = _walked(course, tmp_path, damage)
    counted = Counted(monkeypatch)
    assert _deep(_load(course, tmp_path)) == walked
    assert (f"course/{CHAPTER}" in counted.replayed) is replays
    assert (f"course/{CHAPTER}" in counted.walked) is not replays


@pytest.mark.parametrize("dropped", [False, True])
def test_a_record_the_clean_record_no_longer_vouches_for_is_a_walk(
    tmp_path: Path, dropped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chapter's clean record dropped (as after a document it vouched for failed): its
    documents are validated at the load again, not replayed (and without the drop, they are)."""
    course = _copy(tmp_path)
    entry = f"{clean.FORMAT}:course/{CHAPTER}"

    def drop(store: PackedStore) -> None:
        if dropped:
            store.put(clean.NAMESPACE, entry, {})

    walked = _walked(course, tmp_path, drop)
    counted = Counted(monkeypatch)
    assert _deep(_load(course, tmp_path)) == walked
    assert (counted.walked == [f"course/{CHAPTER}"]) is dropped
    assert (f"course/{CHAPTER}" in counted.replayed) is not dropped


def test_a_folder_listed_only_in_part_is_never_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing cut at `MAX_ASSETS` does not stand for the folder: its chapter is walked."""
    from coursekit.load import listing

    monkeypatch.setattr(listing, "MAX_ASSETS", 3)
    monkeypatch.setattr(replay, "MAX_ASSETS", 3)
    course = _copy(tmp_path)
    walked = _walked(course, tmp_path)
    counted = Counted(monkeypatch)
    assert _deep(_load(course, tmp_path)) == walked
    assert f"course/{CHAPTER}" in counted.walked
    assert "course/I/1-sequences" in counted.replayed  # one file: listed whole


def test_a_chapter_that_met_a_problem_keeps_no_record(tmp_path: Path) -> None:
    course = _copy(tmp_path)
    lesson = course / LESSON
    lesson.write_text(
        lesson.read_text(encoding="utf-8").replace("---\n", "---\nnot_a_key: 1\n", 1),
        encoding="utf-8",
    )
    result = _load(course, tmp_path)
    assert any(d.path == f"course/{LESSON}" for d in result.diagnostics)
    store = PackedStore(DiskStore(tmp_path))
    assert store.get(replay.NAMESPACE, replay.entry(f"course/{CHAPTER}")) is None
    assert store.get(replay.NAMESPACE, replay.entry("course/I/2-the-vanilla-rnn")) is not None


@pytest.mark.parametrize(("name", "replays"), [("same", True), ("other-length", False)])
def test_a_course_moved_replays_where_its_path_is_as_long(
    tmp_path: Path, name: str, replays: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name's use depends on the length of the path it ends (bounds.PATH_MAX), so a record
    holds for the course moved to a path as long, and for no other."""
    first = tmp_path / "from" / "course"
    shutil.copytree(BUNDLED, first)
    _load(first, first.parent)
    moved = tmp_path / name[:4] / "course"
    if name != "same":
        moved = tmp_path / name / "course"
    shutil.copytree(first.parent, moved.parent, dirs_exist_ok=True)
    counted = Counted(monkeypatch)
    replayed = _deep(_load(moved, moved.parent))
    assert bool(counted.replayed) is replays
    assert bool(counted.walked) is not replays
    assert replayed == _walked(moved, moved.parent)


def _edit(course: Path, kind: str, which: int, what: int) -> None:
    """One edit of `kind` to the chapter `which` of the bundled course (and its file `what`)."""
    chapters = sorted(p.parent for p in BUNDLED.glob("*/*/chapter.yaml"))
    chapter = course / chapters[which % len(chapters)].relative_to(BUNDLED)
    files = sorted(p for p in chapter.rglob("*") if p.is_file())
    path = files[what % len(files)] if files else chapter / "chapter.yaml"
    if kind == "append" and path.exists():
        _append(str(path.relative_to(course)))(course)
    elif kind == "remove":
        path.unlink(missing_ok=True)
    elif kind == "add a lesson":
        _write(chapter / "lessons" / f"late-{what % 3}.md", "---\n---\n")
    elif kind == "add an asset":
        _write(chapter / "figures" / f"new-{what % 3}.svg", "<svg/>")
    elif kind == "drop an item":
        _drop_first_item(chapter / "chapter.yaml")
    elif kind == "put back":
        _put_back(chapter, BUNDLED / chapter.relative_to(course))


def _drop_first_item(manifest: Path) -> None:
    if not manifest.exists():
        return
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next((n for n, line in enumerate(lines) if line.startswith("  - lesson: ")), None)
    if at is not None:
        manifest.write_text("".join(lines[:at] + lines[at + 1 :]), encoding="utf-8")


def _put_back(chapter: Path, bundled: Path) -> None:
    shutil.rmtree(chapter, ignore_errors=True)
    shutil.copytree(bundled, chapter)


KINDS = ["append", "remove", "add a lesson", "add an asset", "drop an item", "put back"]


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.sampled_from(KINDS), st.integers(0, 50), st.integers(0, 500)),
        min_size=1,
        max_size=4,
    )
)
def test_random_edits_replay_what_walking_builds(steps: list[tuple[str, int, int]]) -> None:
    """After any sequence of edits, a load that replays finds what a load that walks finds."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        course = root / "course"
        shutil.copytree(BUNDLED, course)
        _load(course, root)
        for step in steps:
            _edit(course, *step)
            replayed = _deep(_load(course, root))
            assert replayed == _walked(course, root)


def test_a_replayed_chapters_manifest_is_validated_when_first_read(tmp_path: Path) -> None:
    course = _copy(tmp_path)
    walked = _walked(course, tmp_path)
    result = _load(course, tmp_path)
    chapters = list(result.course.chapters.values())
    assert chapters and all(type(chapter) is DeferredChapter for chapter in chapters)
    slot = Chapter.__dict__["manifest"]
    assert all(slot.__get__(chapter, Chapter) is None for chapter in chapters)
    assert [chapter.id for chapter in chapters] == list(walked[1])  # known without it
    assert _deep(result) == walked  # read (and validated) here: what the walk validated
    assert all(slot.__get__(chapter, Chapter) is not None for chapter in chapters)


def test_a_replayed_chapters_documents_are_made_when_first_read(tmp_path: Path) -> None:
    course = _copy(tmp_path)
    walked = _walked(course, tmp_path)
    chapters = list(_load(course, tmp_path).course.chapters.values())
    waiting = [chapter for chapter in chapters if chapter.documents is not None]
    assert waiting and len(waiting) == len(chapters)
    slots = [Chapter.__dict__[name] for name in ("lessons", "problems", "exercises")]
    assert all(slot.__get__(c, Chapter) == {} for c in chapters for slot in slots)
    for chapter, (_, _, lessons, listed, held) in zip(chapters, walked[1].values(), strict=True):
        known = (chapter_held(chapter), chapter_paths(chapter))
        assert known == held  # what the walk made, known before they are made
        assert chapter.documents is not None
        assert list(chapter.problems) == known[0][1]  # any one read makes all three
        assert chapter.documents is None
        assert [(k, v.text) for k, v in chapter.lessons.items()] == [
            (k, text) for k, _, text, *_ in lessons
        ]
        assert [k for k, *_ in listed] == known[0][1] + known[0][2]


@pytest.mark.parametrize("text", ["id: [unclosed\n", "id: II.2\nnot_a_key: 1\n"])
def test_a_manifest_the_record_vouched_for_that_fails_drops_the_record(text: str) -> None:
    """A damaged cache: the chapter's record goes, so the next load validates and reports."""
    store = MemoryStore()
    store.put(replay.NAMESPACE, replay.entry("course/I/9-x"), ["kept"])

    class Reader:
        pass

    reader: Any = Reader()
    reader.store = store
    build = replay.manifest_later(reader, text, "course/I/9-x/chapter.yaml", "course/I/9-x")
    with pytest.raises(StaleRecord, match=r"course/I/9-x/chapter\.yaml"):
        build()
    assert store.get(replay.NAMESPACE, replay.entry("course/I/9-x")) == []


def test_a_prose_edit_reads_no_manifest_or_document_of_another_chapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `check`: the edited chapter is walked, and no other chapter's manifest is
    validated (the course-wide facts and CK201/CK405 read what the records keep of them), nor
    are its documents made (the chapter's key reads which files they are)."""
    course = _copy(tmp_path)
    project = find_project(course, course)
    built_for: list[str] = []
    real = replay.manifest_later

    def counted(reader: Any, text: str, rel: str, chapter_dir: str) -> Any:
        build = real(reader, text, rel, chapter_dir)

        def counting() -> Any:
            built_for.append(chapter_dir)
            return build()

        return counting

    monkeypatch.setattr(replay, "manifest_later", counted)
    made_for: list[str] = []
    make = replay._documents

    def making(reader: Any, chapter_id: str, *args: Any) -> Any:
        made_for.append(chapter_id)
        return make(reader, chapter_id, *args)

    monkeypatch.setattr(replay, "_documents", making)

    def check(use_cache: bool = True) -> str:
        out = io.StringIO()
        run_cached(project, [], "text", out, False, Options(), use_cache=use_cache)
        return out.getvalue()

    check()
    _append(LESSON)(course)
    check()  # records every chapter the edit did not touch
    _append(LESSON)(course)
    assert check() == check(use_cache=False)
    assert built_for == []
    assert made_for == []


def test_a_replayed_chapters_texts_with_no_directive_are_known_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record says which texts may hold a suppression directive; the others are not
    scanned for one (`Course.plain`, coursekit.suppress), and `check` reports the same."""
    from coursekit.codes import may_hold_directive

    course = _copy(tmp_path)
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text + "\nA line. <!-- coursekit: ignore[CK301] -->\n", encoding="utf-8")
    first = _load(course, tmp_path)
    assert first.course.plain == {}  # walked: nothing known
    counted = Counted(monkeypatch)
    again = _load(course, tmp_path)
    assert counted.replayed and not counted.walked
    plain, texts = again.course.plain, again.course.texts
    assert plain and all(texts[path] is text for path, text in plain.items())
    assert not any(may_hold_directive(path, text) for path, text in plain.items())
    assert f"{course.name}/{LESSON}" not in plain and f"{course.name}/{LESSON}" in texts
    project = find_project(course, course)

    def check(use_cache: bool = True) -> str:
        out = io.StringIO()
        run_cached(project, [], "text", out, False, Options(), use_cache=use_cache)
        return out.getvalue()

    check()
    _append("I/1-sequences/chapter.yaml")(course)  # a change elsewhere: the lesson's replays
    counted.reset()
    replayed = check()
    assert f"{course.name}/{CHAPTER}" in counted.replayed
    assert replayed == check(use_cache=False)
    unused = [line for line in replayed.splitlines() if "CK001 unused suppression" in line]
    assert len(unused) == 1 and LESSON in unused[0]  # the directive, found in a replayed text
