"""What a load costs the file system, and what it keeps: folders are resolved once, each file
is read once, and positions kept in the cache are decoded only for a document a message needs.

Regressions seen on main: 5,500 realpath/resolve calls at 100 chapters (two per file, each a
syscall per path segment), and every problem's and chapter's position table decoded on every
load to locate messages that were never written.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO, make_course
from coursekit.load import load_course
from coursekit.load.parsecache import PackedSource, cached_parse
from coursekit.load.yamlparse import parse_yaml
from coursekit.load.yamlsafe import LoadError, RealFolders, read_text
from coursekit.model.base import Node, walk_nodes
from coursekit.store import MemoryStore
from helpers import generate


def _course(root: Path, lessons: int) -> Path:
    """The tiny course with `lessons` lessons, each in the chapter's list."""
    course = make_course(root)
    chapter = course / "I/1-first/chapter.yaml"
    text = chapter.read_text(encoding="utf-8")
    body = (course / "I/1-first/lessons/intro.md").read_text(encoding="utf-8")
    for index in range(lessons):
        text += f"  - lesson: extra-{index}\n"
        (course / f"I/1-first/lessons/extra-{index}.md").write_text(body, encoding="utf-8")
    chapter.write_text(text, encoding="utf-8")
    return course


def _count_file_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    for name in ("realpath",):
        real = getattr(os.path, name)

        def counted(*args: object, _real: object = real, _name: str = name, **kw: object) -> object:
            calls[_name] += 1
            return _real(*args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(os.path, name, counted)
    resolve = Path.resolve

    def counted_resolve(self: Path, strict: bool = False) -> Path:
        calls["resolve"] += 1
        return resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counted_resolve)
    return calls


@pytest.mark.parametrize("lessons", [1, 40])
def test_folders_are_resolved_once_not_each_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lessons: int
) -> None:
    course = _course(tmp_path, lessons)
    calls = _count_file_calls(monkeypatch)
    result = load_course(course, tmp_path)
    assert result.diagnostics == []
    assert len(result.course.chapters["I.1"].lessons) == lessons + 1
    # the course folder once; no file and no folder below it needs a realpath of its own
    assert calls["realpath"] + calls["resolve"] <= 1, calls


def test_a_linked_file_inside_the_course_is_still_read(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    lessons = course / "I/1-first/lessons"
    (lessons / "real.txt").write_text((lessons / "intro.md").read_text(encoding="utf-8"))
    (lessons / "intro.md").unlink()
    (lessons / "intro.md").symlink_to(lessons / "real.txt")
    result = load_course(course, tmp_path)
    assert [d.code for d in result.diagnostics] == []
    assert "intro" in result.course.chapters["I.1"].lessons


def test_a_linked_folder_leading_out_is_refused(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    outside = tmp_path / "elsewhere"
    (course / "I/1-first/lessons").rename(outside)
    (course / "I/1-first/lessons").symlink_to(outside)
    result = load_course(course, tmp_path)
    found = [(d.code, d.path, d.message) for d in result.diagnostics]
    assert ("CK102", "course/I/1-first/lessons/intro.md") in [f[:2] for f in found], found
    assert any("outside the course" in f[2] for f in found), found


def test_reading_a_small_file_allocates_what_it_holds_not_the_cap(tmp_path: Path) -> None:
    """Regression: each read asked for the 4 MiB cap, which allocates 4 MiB before reading (an
    mmap and munmap per file unless the allocator's heap served it): ~30 ms of a 100-chapter
    edit's load."""
    import tracemalloc

    small = tmp_path / "small.yaml"
    small.write_text("title: A\n" * 10, encoding="utf-8")
    tracemalloc.start()
    try:
        assert read_text(small, tmp_path) == "title: A\n" * 10
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, peak


def test_a_file_that_grew_since_its_stat_is_read_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read asks for the stat's size and one byte more; a file longer than that by the
    time it is read is read on, never past the cap."""
    from coursekit.bounds import MAX_FILE_BYTES

    grown = tmp_path / "grown.yaml"
    grown.write_text("a: 1\n" * 1000, encoding="utf-8")
    real = os.lstat

    def shrunk(path: object) -> os.stat_result:
        st = real(path)  # type: ignore[arg-type]
        fields = list(st)
        fields[6] = 10  # st_size: as if stat-ed when the file held 10 bytes
        return os.stat_result(fields)

    monkeypatch.setattr(os, "lstat", shrunk)
    assert read_text(grown, tmp_path) == "a: 1\n" * 1000
    grown.write_bytes(b"a" * (MAX_FILE_BYTES + 10))
    with pytest.raises(LoadError, match="over 4 MiB"):
        read_text(grown, tmp_path)


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    lesson = course / "I/1-first/lessons/intro.md"
    lesson.unlink()
    os.mkfifo(lesson)
    found = [(d.code, d.path) for d in load_course(course, tmp_path).diagnostics]
    assert found == [("CK109", "course/I/1-first/chapter.yaml")]  # listed, not a file
    # and read directly (a file swapped for a fifo after the listing): refused, not opened
    with pytest.raises(LoadError, match="not a regular file"):
        read_text(lesson, RealFolders(course))


@pytest.mark.parametrize("parsed_now", [False, True])
def test_cached_positions_are_found_without_unpacking_the_table(parsed_now: bool) -> None:
    """From the cache, and as parsed now (a cold load): the same packed tables, not dicts of
    every position (~90 MB of a cold load's peak at 1,000 chapters)."""
    text = 'a: 1\nb:\n  - x\n  - {c: 2.5}\n\'0\': [7]\n"t\\tab\\n\\"q": {deep: [[1, 2]]}\n'
    store = MemoryStore()
    first = cached_parse(store, text, "g.yaml", 2)
    data, source = first if parsed_now else cached_parse(store, text, "g.yaml", 2)
    fresh_data, fresh = parse_yaml(text, "g.yaml", 2)
    assert isinstance(source, PackedSource) and source.at is not None
    assert data == fresh_data
    for path in [*fresh.values, ("b", 9), ("nowhere", "x"), ("0", 0, 3)]:
        assert source.value_at(path) == fresh.value_at(path), path
    for path in [*fresh.keys, ("b", 0)]:
        assert source.key_at(path) == fresh.key_at(path), path
    assert source.at is not None  # located without building the tables
    assert (source.values, source.keys) == (fresh.values, fresh.keys)  # and unpacked whole
    assert source.value_at(("b", 1, "c")) == fresh.value_at(("b", 1, "c"))


def test_what_is_below_a_path_is_every_value_and_key_there_packed_or_not() -> None:
    text = "a: 1\nb:\n  - x\n  - {c: 2.5, d: [3]}\ne: 4\n"
    packed = cached_parse(MemoryStore(), text, "g.yaml", 2)[1]
    fresh = parse_yaml(text, "g.yaml", 2)[1]
    for source in (packed, fresh):
        below = source.below(("b", 1))
        assert [(path, key) for path, _, key in below] == [
            (("b", 1), False),
            (("b", 1, "c"), False),
            (("b", 1, "d"), False),
            (("b", 1, "d", 0), False),
            (("b", 1, "c"), True),
            (("b", 1, "d"), True),
        ]
        assert [at for _, at, key in below if not key][1] == (
            source.value_at(("b", 1, "c")).line,
            source.value_at(("b", 1, "c")).column,
        )
        assert source.below(("b", 2)) == [] and source.below(("z",)) == []
        assert source.below(("b",))[0][0] == ("b",)  # another length: indexed too
    assert packed.below(("b", 1)) == fresh.below(("b", 1))


@pytest.mark.parametrize(
    "damage",
    [["not json", "x"], ['\n["a"]\tX\t2\n', ""], ['\n["a"\t1\n', "\n[[\t1\t1\n"], "[1, 2]"],
)
def test_damaged_cached_positions_fall_back_to_the_document(damage: object) -> None:
    store = MemoryStore()
    text = "a: 1\n"
    cached_parse(store, text, "f.yaml")
    key = next(iter(store._data))
    store._data[key] = {"data": {"a": 1}, "at": damage}
    data, source = cached_parse(store, text, "f.yaml")
    assert data == {"a": 1}
    assert source.value_at(("a",)).line >= 1  # no exception: the top of the file at worst
    assert source.key_at(("a",)).line >= 1
    assert isinstance(source.values, dict)


def test_a_clean_load_from_the_cache_decodes_no_positions(tmp_path: Path) -> None:
    course = _course(tmp_path, 3)
    store = MemoryStore()
    load_course(course, tmp_path, store)
    result = load_course(course, tmp_path, store)
    assert result.diagnostics == []
    chapter = result.course.chapters["I.1"]
    sources = [chapter.manifest.located_in, *(x.meta.located_in for x in chapter.lessons.values())]
    assert all(isinstance(s, PackedSource) and s.at is not None for s in sources)
    # and a message still lands where the fresh parse says
    assert chapter.manifest.loc("items", 0, "lesson").column == 13


def test_equal_models_compare_their_packed_sources_without_unpacking() -> None:
    """pydantic compares private attributes, so `model == model` compares the sources."""
    store = MemoryStore()
    text = "a: 1\nb: [2]\n"
    cached_parse(store, text, "f.yaml")
    _, one = cached_parse(store, text, "f.yaml")
    _, two = cached_parse(store, text, "f.yaml")
    _, elsewhere = cached_parse(store, text, "g.yaml")
    assert one == two and one != elsewhere
    assert isinstance(one, PackedSource) and one.at is not None and two.at is not None
    assert one == parse_yaml(text, "f.yaml")[1]  # a fresh source: compared table by table


def _all_nodes(course: object) -> list[Node]:
    from coursekit.model.tree import Course

    assert isinstance(course, Course)
    roots: list[Node] = [course.manifest] if course.manifest is not None else []
    for book in course.books.values():
        roots.append(book.manifest)
    for chapter in course.chapters.values():
        roots.append(chapter.manifest)
        roots += [lesson.meta for lesson in chapter.lessons.values()]
        roots += [problem.meta for problem in chapter.problems.values()]
        roots += [exercise.meta for exercise in chapter.exercises.values()]
    return [node for root in roots for node in walk_nodes(root)]


@pytest.mark.parametrize("cached", [False, True])
def test_every_node_of_the_real_course_knows_where_it_came_from(cached: bool) -> None:
    """`attach` walks only the fields whose type can hold a node: none may be missed, fresh
    from YAML or served from the cache."""
    store = MemoryStore()
    result = load_course(REPO / "course", REPO, store)
    if cached:
        result = load_course(REPO / "course", REPO, store)
    nodes = _all_nodes(result.course)
    assert len(nodes) > 200
    lost = [type(n).__name__ for n in nodes if n.located_in is None]
    assert not lost, f"nodes without a location: {Counter(lost)}"
    assert all(n.loc().path.startswith("course/") for n in nodes)


@pytest.mark.parametrize("enabled", [True, False])
def test_a_load_leaves_the_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    course = make_course(tmp_path)
    was, thresholds = gc.isenabled(), gc.get_threshold()
    try:
        (gc.enable if enabled else gc.disable)()
        load_course(course, tmp_path)
        assert gc.isenabled() is enabled
        assert gc.get_threshold() == thresholds
        assert gc.get_freeze_count() > 0  # what the load built is left out of later collections
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def _collections_during(load: Callable[[], object]) -> tuple[set[tuple[int, int]], set[int]]:
    """While `load` ran: the older generations' thresholds at each collection the collector
    ran, and the generations it collected."""
    thresholds: set[tuple[int, int]] = set()
    generations: set[int] = set()

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":  # after the load's own callback has had its say
            thresholds.add(gc.get_threshold()[1:])
            generations.add(info["generation"])

    gc.callbacks.append(note)
    try:
        load()
    finally:
        gc.callbacks.remove(note)
        gc.unfreeze()
    return thresholds, generations


def test_a_load_from_the_cache_collects_only_the_young(tmp_path: Path) -> None:
    """Built from the cache, a load makes no garbage cycles: a full collection, walking every
    object the load had built, was 0.28 s of a 1.4 s load at 1,000 chapters, and the middle
    generation's ~50 collections ~60 ms of a prose edit there. Parsing YAML does leave
    cycles: a load that parses resumes them (the full ones a tenth as often)."""

    from coursekit.load import collecting

    course: Path = generate(20, tmp_path / "c")
    documents = sum(1 for p in course.rglob("*") if p.suffix in (".yaml", ".md"))
    assert documents > 2 * collecting.PARSES_BEFORE_COLLECTING
    store = MemoryStore()
    never, few = collecting.NO_OLDER_COLLECTION, collecting.FEW_FULL_COLLECTIONS
    middle = gc.get_threshold()[1]
    parsing, parsed_generations = _collections_during(lambda: load_course(course, tmp_path, store))
    cached, cached_generations = _collections_during(lambda: load_course(course, tmp_path, store))
    assert parsing == {(never, never), (middle, few)}
    assert 1 in parsed_generations
    assert cached == {(never, never)}
    assert cached_generations == {0}


def _chapter_manifest() -> Node:
    from coursekit.load.validate import validate
    from coursekit.model.documents import ChapterManifest

    text = (REPO / "course/II/2-from-recurrence-to-attention/chapter.yaml").read_text("utf-8")
    data, source = parse_yaml(text, "chapter.yaml")
    model, problems = validate(ChapterManifest, data, source)
    assert model is not None, problems
    return model


HOW = ["model_copy", "deep model_copy", "deep, updated", "copy.copy", "deepcopy", "pickle"]


@pytest.mark.parametrize("how", HOW)
def test_a_copy_of_a_node_keeps_where_it_came_from(how: str) -> None:
    import copy
    import pickle

    node = _chapter_manifest()
    copies: dict[str, Callable[[], Node]] = {
        "model_copy": lambda: node.model_copy(),
        "deep model_copy": lambda: node.model_copy(deep=True),
        "deep, updated": lambda: node.model_copy(deep=True, update={"maturity": "M4"}),
        "copy.copy": lambda: copy.copy(node),
        "deepcopy": lambda: copy.deepcopy(node),
        "pickle": lambda: pickle.loads(pickle.dumps(node)),
    }
    copied = copies[how]()
    assert copied is not node
    assert (copied == node) is (how != "deep, updated")
    assert copied.loc("strands") == node.loc("strands") and node.loc("strands").line > 1
    assert [n.located_in is not None for n in walk_nodes(copied)] == [True] * len(
        list(walk_nodes(node))
    )


def test_where_a_node_came_from_costs_no_mapping_per_node() -> None:
    """A one-key dict per node to hold its (source, path) was ~15 MB of a 1,000-chapter
    course: what `attach` adds per node is the pair and its path, ~100 bytes."""
    import tracemalloc

    from coursekit.model.documents import ChapterManifest

    text = (REPO / "course/II/2-from-recurrence-to-attention/chapter.yaml").read_text("utf-8")
    data, source = parse_yaml(text, "chapter.yaml")
    models = [ChapterManifest.model_validate(data) for _ in range(30)]
    nodes = sum(len(list(walk_nodes(model))) for model in models)
    assert nodes > 600 and all(model.located_in is None for model in models)
    tracemalloc.start()
    try:
        for model in models:
            model.attach(source)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held / nodes < 180, held / nodes
    assert models[0] == models[1]  # equal data in an equal place
    models[1].attach(source, ("elsewhere",))
    assert models[0] != models[1]  # equality still sees the location


# A `coursekit check` in a fresh interpreter, which says afterwards whether ruamel was imported.
# (told at exit: the command leaves without returning, `coursekit.__main__.leave`)
_CHECK_THEN_TELL = """
import atexit, sys
from coursekit.__main__ import main
atexit.register(lambda: sys.stderr.write("ruamel imported: %s\\n" % ("ruamel.yaml" in sys.modules)))
sys.argv = ["coursekit", "check"]
main()
"""


def test_a_check_that_parses_no_yaml_does_not_import_the_parser(tmp_path: Path) -> None:
    # ruamel (~7 ms of every fresh process) is needed only to parse: an edit's documents come
    # from the cache, the edited lesson's front matter too when only its prose changed
    import subprocess
    import sys

    course = make_course(tmp_path)

    def check() -> str:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-c", _CHECK_THEN_TELL],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert "All checks passed" in done.stdout, done.stdout + done.stderr
        return done.stderr.strip().splitlines()[-1]

    assert check() == "ruamel imported: True"  # the first check parses every document
    lesson = course / "I/1-first/lessons/intro.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "More prose.\n", encoding="utf-8")
    assert check() == "ruamel imported: False"
