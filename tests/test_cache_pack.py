"""The pack (coursekit.cache_pack): one file holds the store entries a run used, so an edit's
run reads one file instead of one per document; it never changes what a run reports."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from coursekit import cache, cache_store
from coursekit.cache_files import FORMAT, read_records, write_records
from coursekit.cache_pack import MAGIC, PACK, PackedStore
from coursekit.commands.check import run_cached
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.store import SYMPY_PARTS
from helpers import pack_folder

BUNDLED = Path(__file__).resolve().parent.parent / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/model-width.md"
CLAIMS = "II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"
OPTIONS = Options(exec=False)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(BUNDLED, target)
    return target


def _check(course: Path, use_cache: bool = True, options: Options = OPTIONS) -> str:
    out = io.StringIO()
    run_cached(find_project(course, course), [], "json", out, False, options, use_cache)
    return out.getvalue()


def _pack(course: Path) -> dict[str, dict[str, object]]:
    """What the next run reads: the pack (a stream of records under the salt) and its delta
    (tests/test_cache_pack_delta.py)."""
    path = pack_folder(course.parent) / PACK
    records = read_records(path, MAGIC)
    assert records is not None, "the pack is not a stream of records"
    assert records[0] == cache.DiskStore(course.parent).salt
    entries: dict[str, dict[str, object]] = PackedStore(cache.DiskStore(course.parent))._entries()
    return entries


def _edit(course: Path, n: int) -> None:
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.rstrip("\n") + f"\n\nAn added sentence, take {n}.\n", "utf-8")


def _store_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each entry read from the store one by one, (namespace, key), from now on."""
    reads: list[tuple[str, str]] = []
    real = cache.DiskStore.get

    def counted(self: cache.DiskStore, namespace: str, key: str) -> object:
        reads.append((namespace, key))
        return real(self, namespace, key)

    monkeypatch.setattr(cache.DiskStore, "get", counted)
    return reads


def test_an_edit_reads_the_pack_not_the_entries(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(course)
    assert _pack(course)["yaml"]  # the parsed documents are in it
    reads = _store_reads(monkeypatch)
    _edit(course, 1)
    assert _check(course) == _check(course, use_cache=False)
    assert reads == []  # prose: every entry the run needs was in the pack
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.replace("\ntitle: ", "\ntitle: Retitled: ", 1), encoding="utf-8")
    assert _check(course) == _check(course, use_cache=False)
    # the front matter changed: its parse is the one entry looked up on its own
    assert [ns for ns, _ in reads] == ["yaml"], reads


def test_two_sets_of_options_used_in_turn_read_their_results_from_the_pack(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (#20): each set of options (`check`, `check --structural`, another
    configuration) keeps per-chapter results of its own. Kept as an entry per chapter and
    set, the pack of what a run used held the last set's alone, so each run after a switch
    read every chapter's results one file at a time: 0.69-0.71 against 0.45-0.48 s a prose
    edit at 1,000 chapters."""
    other = Options(exec=False, formulas=False)
    _check(course)
    _check(course, options=other)  # each set has run once
    reads = _store_reads(monkeypatch)
    for n, options in enumerate([OPTIONS, other, OPTIONS]):
        _edit(course, n)
        assert _check(course, options=options) == _check(course, False, options)
        assert [key for namespace, key in reads if namespace == "rules"] == [], n


def test_the_pack_holds_one_runs_entries(course: Path) -> None:
    _check(course)
    first = {ns: len(entries) for ns, entries in _pack(course).items()}
    for n in range(3):
        _edit(course, n)
        _check(course)
    assert {ns: len(entries) for ns, entries in _pack(course).items()} == first


def test_the_pack_is_a_few_records_of_many_entries(course: Path) -> None:
    """A record per entry was a Python loop over ~10,800 of them on each read (~20 ms at 1,000
    chapters); the entries go `CHUNK` to a record, a namespace's together, read back exactly."""
    from coursekit.cache_pack import CHUNK

    _check(course)
    path = pack_folder(course.parent) / PACK
    records = read_records(path, MAGIC)
    assert records is not None
    chunks = records[1:]
    entries = _pack(course)
    count = sum(map(len, entries.values()))
    assert all(isinstance(chunk, tuple) and 0 < len(chunk[1]) <= CHUNK for chunk in chunks)
    assert len(chunks) <= count // CHUNK + len(entries)  # full ones, one partial a namespace
    assert count > 2 * len(chunks)
    assert {name: dict(kept) for name, kept in entries.items()} == {
        name: {key: value for n, chunk in chunks if n == name for key, value in chunk.items()}
        for name in entries
    }


def _rewrite(path: Path, records: list[object]) -> None:
    assert write_records(path, MAGIC, records)


DAMAGE: dict[str, Callable[[Path], object]] = {
    "json": lambda p: p.write_text("{not json", encoding="utf-8"),
    "json pack": lambda p: p.write_text(json.dumps({"salt": "x", "entries": []}), "utf-8"),
    "crc cut": lambda p: p.write_bytes(p.read_bytes()[:-1]),
    "half": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "trailing": lambda p: p.write_bytes(p.read_bytes() + b"0"),
    "one byte": lambda p: p.write_bytes(p.read_bytes().replace(b"II.2", b"II.3", 1)),
    "old magic": lambda p: p.write_bytes(
        b"coursekit-pack\0" + b"0\0" + p.read_bytes()[len(MAGIC) :]
    ),
    "salt": lambda p: _rewrite(p, ["another salt", ("yaml", {"k": b"1"})]),
    "pair": lambda p: _rewrite(p, [read_records(p, MAGIC)[0], ("yaml", "k")]),  # type: ignore[index]
    "one per entry": lambda p: _rewrite(p, [read_records(p, MAGIC)[0], ("yaml", "k", b"1")]),  # type: ignore[index]
    "bytes": lambda p: _rewrite(p, [read_records(p, MAGIC)[0], (b"yaml", {"k": 1})]),  # type: ignore[index]
    "key": lambda p: _rewrite(p, [read_records(p, MAGIC)[0], ("rules", {1: []})]),  # type: ignore[index]
    "empty": lambda p: _rewrite(p, []),
    # a parse held unpacked, where the pack holds its marshal bytes (`LAZY`)
    "unpacked": lambda p: _rewrite(p, [read_records(p, MAGIC)[0], ("yaml", {"k": {"data": 1}})]),  # type: ignore[index]
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled course with the cache one check leaves (made once for the damage cases)."""
    target = tmp_path_factory.mktemp("checked") / "course"
    shutil.copytree(BUNDLED, target)
    _check(target)
    return target


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_or_foreign_pack_is_no_pack(checked: Path, tmp_path: Path, damage: str) -> None:
    root = tmp_path / "project"
    shutil.copytree(checked.parent / cache.CACHE_DIR, root / cache.CACHE_DIR)
    DAMAGE[damage](pack_folder(root) / PACK)
    assert PackedStore(cache.DiskStore(checked.parent))._entries()  # the undamaged one serves
    assert PackedStore(cache.DiskStore(root))._entries() == {}  # (the salt: the environment's)


@pytest.mark.parametrize("damage", ["json", "crc cut", "pair"])
def test_a_damaged_pack_costs_speed_not_findings(course: Path, damage: str) -> None:
    _check(course)
    DAMAGE[damage](pack_folder(course.parent) / PACK)
    _edit(course, 1)
    assert _check(course) == _check(course, use_cache=False)


def test_a_pack_entry_under_the_right_salt_is_served(course: Path) -> None:
    """The pack is what is read: a (planted) entry in it is what the run sees."""
    _check(course)
    store = cache.DiskStore(course.parent)
    path = pack_folder(course.parent) / PACK
    _rewrite(path, [store.salt, ("planted", {"key": {"value": [1, "two"]}})])
    assert PackedStore(store).get("planted", "key") == {"value": [1, "two"]}


def test_the_packs_an_earlier_version_left_are_removed(course: Path) -> None:
    """pack.json and files.json, and the one pack.bin (and its delta) every environment shared
    before each kept its own, are nothing this version reads: a run that writes its pack
    removes them rather than keep ~20-47 MB (at 1,000 chapters) for ever."""
    from coursekit.cache_pack import LEGACY

    base = course.parent / cache.CACHE_DIR / FORMAT
    base.mkdir(parents=True)
    for name in LEGACY:
        (base / name).write_text('{"salt": "old"}', encoding="utf-8")
    _check(course)
    assert [name for name in LEGACY if (base / name).exists()] == []
    assert (pack_folder(course.parent) / PACK).is_file()


def test_environments_used_in_turn_each_keep_their_pack(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (#20): a virtual environment's `check` and pre-commit's hook (another
    environment, another salt) replaced each other's one pack, so every run after a switch
    read its entries one by one: at 1,000 chapters an edit took ~1.9 s instead of ~0.5 s."""
    _check(course)
    mine = pack_folder(course.parent) / PACK
    assert mine.is_file()
    real = cache.environment

    def another() -> dict[str, str]:
        return {**real(), "prefix": "/elsewhere/venv"}  # pre-commit's environment, say

    for module in (cache, cache_store):  # (the run's key, the store's salt)
        monkeypatch.setattr(module, "environment", another)
    theirs = pack_folder(course.parent) / PACK
    assert theirs != mine
    _check(course)
    assert theirs.is_file() and mine.is_file()
    for module in (cache, cache_store):
        monkeypatch.setattr(module, "environment", real)
    store = PackedStore(cache.DiskStore(course.parent))
    assert store._entries(), "the first environment's pack was replaced"


def test_a_value_computed_this_run_is_packed_as_its_entry_reads_back(tmp_path: Path) -> None:
    """The next run reads from the pack what it would read from the DiskStore's JSON entry:
    tuples as lists, keys as strings; a value JSON cannot hold is in neither."""
    root = tmp_path / "project"
    root.mkdir()
    store = PackedStore(cache.DiskStore(root))
    store.put("ns", "tuple", (1, ("a", 2.5)))
    store.put("ns", "keys", {1: "one"})
    store.put("ns", "object", {"x": object()})
    assert store.save()
    again = PackedStore(cache.DiskStore(root))
    assert again.get("ns", "tuple") == [1, ["a", 2.5]]
    assert again.get("ns", "keys") == {"1": "one"}
    assert again.get("ns", "object") is None
    assert cache.DiskStore(root).get("ns", "tuple") == again.get("ns", "tuple")


VALUES: list[object] = [
    {
        "salt": "s",
        "entries": {"yaml": {"k1": {"data": [1, 2.5, None], "at": ["\n[]\t1\t1\n", ""]}}},
    },
    {"a": {"b": {"c": {"d": [float("nan"), float("inf"), 'é\u2028\\"q']}}}, "": {}},
    {1: "int keys fall back to the one-shot encoder", "x": {2: 3}},
    {"empty": {}, "list": [], "nested": {"deeper": {"deepest": {"k": "v"}}}},
    [1, {"a": 2}],
    "a string",
]


@pytest.mark.parametrize("value", VALUES)
def test_records_read_back_as_written(tmp_path: Path, value: object) -> None:
    path = tmp_path / cache.CACHE_DIR / "v1" / "x.bin"
    records = [value, ("a", value), [value, value]]
    assert write_records(path, b"magic\0", records)
    assert repr(read_records(path, b"magic\0")) == repr(records)  # nan != nan: compare reprs
    assert read_records(path, b"other\0") is None


def test_a_value_marshal_cannot_hold_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / cache.CACHE_DIR / "v1" / "x.bin"
    assert write_records(path, b"magic\0", ["before"])
    assert not write_records(path, b"magic\0", ["a", object()])
    assert read_records(path, b"magic\0") == ["before"]  # the old file, whole


def test_a_json_entry_is_json_dumps(tmp_path: Path) -> None:
    from coursekit.cache_files import _write_json

    path = tmp_path / cache.CACHE_DIR / "v1" / "x.json"
    for value in VALUES:
        assert _write_json(path, value)
        expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        assert path.read_bytes() == expected.encode("utf-8")


def test_writing_the_pack_does_not_hold_it_whole(tmp_path: Path) -> None:
    """The pack is written record by record: at 1,000 chapters it is ~18 MB, and a writer
    that built it whole first (the one-shot JSON encoder: ~5x its size) raised the run's peak
    memory by that much."""
    import tracemalloc

    entries = {
        f"{n:064x}:0": {"data": {"id": f"I.{n}", "items": [{"lesson": f"l{i}"} for i in range(30)]}}
        for n in range(3000)
    }
    entries["wide"] = {"data": {"title": "The expectation 𝔼[X]"}}
    records = [("yaml", key, value) for key, value in entries.items()]
    path = tmp_path / cache.CACHE_DIR / "v1" / PACK
    tracemalloc.start()
    try:
        assert write_records(path, MAGIC, ["s", *records])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert read_records(path, MAGIC) == ["s", *records]
    assert peak < size / 4, (peak, size)


def test_saving_converts_the_values_computed_one_at_a_time(tmp_path: Path) -> None:
    """A cold run computes every entry: converting each to what the DiskStore's JSON gives
    back, all of them before the pack was written, held a second copy of them beside the
    run's own (400 MB against 342 MB peak for a cold check at 1,000 chapters)."""
    import tracemalloc

    root = tmp_path / "project"
    root.mkdir()
    store = PackedStore(cache.DiskStore(root))
    store.below.put = lambda *_: None  # type: ignore[method-assign]  # measure the pack alone
    for n in range(3000):  # (`CHUNK` of them converted at a time)
        store.put(
            "yaml", f"{n:064x}:0", {"data": {"items": [{"lesson": f"l{i}"} for i in range(40)]}}
        )
    tracemalloc.start()
    try:
        assert store.save()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = (pack_folder(root) / PACK).stat().st_size
    assert PackedStore(cache.DiskStore(root)).get("yaml", f"{7:064x}:0") == {
        "data": {"items": [{"lesson": f"l{i}"} for i in range(40)]}
    }
    assert peak < size / 2, (peak, size)


def test_reading_records_sets_off_no_collection_and_leaves_them_frozen(tmp_path: Path) -> None:
    """What the pack and the stat table hold lives as long as the run and holds no cycle: the
    collector, set off by the containers as they are built and walking them again later, took
    ~0.24 s of a prose edit at 1,000 chapters."""
    import gc

    records = [
        ("yaml", f"{n:064x}", {"items": [{"lesson": f"l{i}"} for i in range(20)]})
        for n in range(2000)
    ]
    path = tmp_path / cache.CACHE_DIR / "v1" / PACK
    assert write_records(path, MAGIC, records)
    collections: list[int] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.unfreeze()
    gc.callbacks.append(counted)
    try:
        read = read_records(path, MAGIC)
        frozen = gc.get_freeze_count()
    finally:
        gc.callbacks.remove(counted)
        gc.unfreeze()
    assert read == records
    assert gc.isenabled()
    assert collections == []
    assert frozen > 2000 * 21  # every dict and list read (and what else the process held)


def test_forget_lets_go_of_a_namespace_in_memory_only(course: Path) -> None:
    _check(course)
    pack = pack_folder(course.parent) / PACK
    before = pack.read_bytes()
    store = PackedStore(cache.DiskStore(course.parent))
    kept = store._entries()
    key = next(iter(kept["yaml"]))
    other = next(n for n in kept if n != "yaml")
    store.forget("yaml")
    assert store.peek("yaml", key) is None
    assert store._entries().get(other)
    assert "yaml" not in store.used and "yaml" not in store._base
    assert pack.read_bytes() == before


def test_what_a_lessons_jobs_came_to_is_kept_on_disk_not_in_the_pack(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read once per edit of a lesson's maths: not worth a place in what every run reads."""
    _check(course)
    assert SYMPY_PARTS not in _pack(course)
    reads: list[str] = []
    real = cache.DiskStore.get

    def counted(self: cache.DiskStore, namespace: str, key: str) -> object:
        reads.append(namespace)
        return real(self, namespace, key)

    monkeypatch.setattr(cache.DiskStore, "get", counted)
    lesson = course / CLAIMS
    text = lesson.read_text(encoding="utf-8")
    head, marker, rest = text.partition("    value: ")
    number, newline, tail = rest.partition("\n")
    lesson.write_text(head + marker + str(int(number) + 1) + newline + tail, "utf-8")
    assert _check(course) == _check(course, use_cache=False)
    assert reads.count(SYMPY_PARTS) == 1  # the edited lesson's, from its own entry
    assert SYMPY_PARTS not in _pack(course)


def test_a_parse_is_unpacked_when_read_and_packed_again_as_it_was_read(tmp_path: Path) -> None:
    """The pack holds each parsed document as its own marshal bytes (`LAZY`): a run unpacks
    those it reads, carries the others unread, and the next pack holds the same bytes for
    both, so a run that changed nothing writes no change."""
    root = tmp_path / "project"
    root.mkdir()
    values = {
        f"k{n}": {"data": {"items": [{"lesson": f"l{i}"} for i in range(n)]}} for n in range(4)
    }
    first = PackedStore(cache.DiskStore(root))
    for key, value in values.items():
        first.put("yaml", key, value)
    first.put("other", "k", {"x": [1]})
    assert first.save()
    second = PackedStore(cache.DiskStore(root))
    read = {key: second._entries()["yaml"][key] for key in values}
    assert all(type(raw) is bytes for raw in read.values())
    assert second.get("yaml", "k1") == values["k1"]  # read: unpacked
    assert second.carry("yaml", "k2")  # carried: still its bytes
    assert second._entries()["yaml"]["k2"] is read["k2"]
    assert not second.carry("yaml", "absent")
    assert second.get("other", "k") == {"x": [1]}
    assert second._changes() == [("yaml", "k0"), ("yaml", "k3")]  # the two not used, gone
    assert second.save()
    third = PackedStore(cache.DiskStore(root))
    assert {k: third._entries()["yaml"][k] for k in ("k1", "k2")} == {
        k: read[k] for k in ("k1", "k2")
    }
    assert third.get("yaml", "k2") == values["k2"]
    assert third.get("yaml", "k0") == values["k0"]  # from the DiskStore, packed again


def test_a_prose_edit_unpacks_the_parses_it_reads_alone(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other chapters' manifests are carried to the next pack unread (their chapters are
    replayed: coursekit.load.replay)."""
    saved: list[PackedStore] = []
    real = PackedStore.save

    def keeping(store: PackedStore) -> bool:
        saved.append(store)
        return real(store)

    monkeypatch.setattr(PackedStore, "save", keeping)
    _check(course)
    _edit(course, 1)
    _check(course)  # records the chapters the edit did not touch
    _edit(course, 2)
    saved.clear()
    assert _check(course) == _check(course, use_cache=False)
    store = saved[0]
    unpacked = {key for namespace, key in store._unpacked if namespace == "yaml"}
    carried = {key for key, value in store.used["yaml"].items() if type(value) is bytes}
    manifests = len(list(course.glob("*/*/chapter.yaml")))
    assert len(carried) >= manifests - 1, (len(carried), manifests)  # all but the edited one's
    assert unpacked and not unpacked & carried
