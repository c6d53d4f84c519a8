"""The pack (coursekit.cache_pack): one file holds the store entries a run used, so an edit's
run reads one file instead of one per document; it never changes what a run reports."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from coursekit import cache
from coursekit.cache_files import FORMAT
from coursekit.cache_pack import PACK
from coursekit.commands.check import run_cached
from coursekit.options import Options
from coursekit.project import find_project

BUNDLED = Path(__file__).resolve().parent.parent / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/model-width.md"
OPTIONS = Options(exec=False)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(BUNDLED, target)
    return target


def _check(course: Path, use_cache: bool = True) -> str:
    out = io.StringIO()
    run_cached(find_project(course, course), [], "json", out, False, OPTIONS, use_cache)
    return out.getvalue()


def _pack(course: Path) -> dict[str, dict[str, object]]:
    path = course.parent / cache.CACHE_DIR / FORMAT / PACK
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert isinstance(entries, dict)
    return entries


def _edit(course: Path, n: int) -> None:
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.rstrip("\n") + f"\n\nAn added sentence, take {n}.\n", "utf-8")


def test_an_edit_reads_the_pack_not_the_entries(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(course)
    assert _pack(course)["yaml"]  # the parsed documents are in it
    reads: list[tuple[str, str]] = []
    real = cache.DiskStore.get

    def counted(self: cache.DiskStore, namespace: str, key: str) -> object:
        reads.append((namespace, key))
        return real(self, namespace, key)

    monkeypatch.setattr(cache.DiskStore, "get", counted)
    _edit(course, 1)
    assert _check(course) == _check(course, use_cache=False)
    assert reads == []  # prose: every entry the run needs was in the pack
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.replace("\ntitle: ", "\ntitle: Retitled: ", 1), encoding="utf-8")
    assert _check(course) == _check(course, use_cache=False)
    # the front matter changed: its parse is the one entry looked up on its own
    assert [ns for ns, _ in reads] == ["yaml"], reads


def test_the_pack_holds_one_runs_entries(course: Path) -> None:
    _check(course)
    first = {ns: len(entries) for ns, entries in _pack(course).items()}
    for n in range(3):
        _edit(course, n)
        _check(course)
    assert {ns: len(entries) for ns, entries in _pack(course).items()} == first


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_text("{not json", encoding="utf-8"),
        lambda p: p.write_text(json.dumps({"salt": "other", "entries": {"yaml": {}}}), "utf-8"),
        lambda p: p.write_text(json.dumps({"salt": "x", "entries": []}), encoding="utf-8"),
    ],
)
def test_a_damaged_or_foreign_pack_is_a_miss(course: Path, damage: object) -> None:
    _check(course)
    path = course.parent / cache.CACHE_DIR / FORMAT / PACK
    assert callable(damage)
    damage(path)
    _edit(course, 1)
    assert _check(course) == _check(course, use_cache=False)


def test_a_pack_entry_under_the_right_salt_is_served(course: Path) -> None:
    """The pack is what is read: a (planted) entry in it is what the run sees."""
    _check(course)
    path = course.parent / cache.CACHE_DIR / FORMAT / PACK
    pack = json.loads(path.read_text(encoding="utf-8"))
    store = cache.DiskStore(course.parent)
    assert pack["salt"] == store.salt
    from coursekit.cache_pack import PackedStore

    packed = PackedStore(store)
    namespace, entries = next(iter(pack["entries"].items()))
    key, value = next(iter(entries.items()))
    assert packed.get(namespace, key) == value


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
@pytest.mark.parametrize("spread", [0, 1, 3, 9])
def test_written_entry_by_entry_the_bytes_are_json_dumps(
    tmp_path: Path, value: object, spread: int
) -> None:
    from coursekit.cache_files import _write_json

    path = tmp_path / cache.CACHE_DIR / "v1" / "x.json"
    assert _write_json(path, value, spread=spread)
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    assert path.read_bytes() == expected.encode("utf-8")


def test_writing_the_pack_does_not_hold_every_token_at_once(tmp_path: Path) -> None:
    """Regression: the one-shot encoder peaked at ~5x the pack's size (94 MB for 19 MB at
    1,000 chapters): one character outside the BMP anywhere (course maths: 𝔼) makes the whole
    text 4 bytes a character before it is encoded. Entry by entry, only that entry is."""
    import tracemalloc

    from coursekit.cache_files import _write_json

    entries = {
        f"{n:064x}:0": {"data": {"id": f"I.{n}", "items": [{"lesson": f"l{i}"} for i in range(30)]}}
        for n in range(3000)
    }
    entries["wide"] = {"data": {"title": "The expectation 𝔼[X]"}}
    pack = {"salt": "s", "entries": {"yaml": entries}}
    path = tmp_path / cache.CACHE_DIR / "v1" / "pack.json"
    tracemalloc.start()
    try:
        assert _write_json(path, pack, spread=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert json.loads(path.read_bytes()) == pack
    assert peak < 3 * size, (peak, size)
