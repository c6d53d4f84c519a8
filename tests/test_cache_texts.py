"""Texts kept in the pack (coursekit.cache_seen.SeenTree): after an edit, the loader reads the
files whose content changed and takes every other text from the pack, by the content hash the
run's tree digest just took. What a run reports never depends on where a text came from."""

from __future__ import annotations

import io
import random
import shutil
from pathlib import Path

import pytest

from coursekit import cache, engine
from coursekit.cache_files import read_records, sha256
from coursekit.cache_pack import MAGIC, PACK, TEXTS, PackedStore
from coursekit.commands.check import run_cached
from coursekit.engine import CheckResult
from coursekit.load import LoadResult, reader, yamlsafe
from coursekit.model.tree import Course
from coursekit.options import Options
from coursekit.project import Project, find_project
from coursekit.rules import facts
from helpers import pack_folder

BUNDLED = Path(__file__).resolve().parent.parent / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/model-width.md"
OTHER = "II/2-from-recurrence-to-attention/lessons/scaled-scores.md"
OPTIONS = Options(exec=False, formulas=False)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(BUNDLED, target)
    return target


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the loader reads from disk, relative to the course folder's parent."""
    seen: list[str] = []
    real = yamlsafe.read_text

    def counted(path: Path, root: object) -> str:
        seen.append(Path(path).as_posix())
        return real(path, root)  # type: ignore[arg-type]

    monkeypatch.setattr(reader, "read_text", counted)
    return seen


def _check(course: Path, use_cache: bool = True) -> str:
    out = io.StringIO()
    run_cached(find_project(course, course), [], "json", out, False, OPTIONS, use_cache)
    return out.getvalue()


def _kept_texts(course: Path) -> dict[str, object]:
    """The texts the next run reads: the pack's, as its delta amends them."""
    assert read_records(pack_folder(course.parent) / PACK, MAGIC) is not None
    texts: dict[str, object] = PackedStore(cache.DiskStore(course.parent))._entries()[TEXTS]
    return texts


def _relative(course: Path, paths: list[str]) -> list[str]:
    return sorted(Path(p).relative_to(course).as_posix() for p in paths)


def test_an_edit_reads_the_edited_file_alone(course: Path, reads: list[str]) -> None:
    _check(course)
    every = len(reads)
    assert every > 20  # the cold run read the whole course
    (course / LESSON).write_text(
        (course / LESSON).read_text(encoding="utf-8") + "\nOne sentence more.\n", "utf-8"
    )
    reads.clear()
    edited = _check(course)
    assert _relative(course, reads) == [LESSON]
    reads.clear()
    assert edited == _check(course, use_cache=False)
    assert len(reads) == every  # a run without the cache reads everything, as before


def test_the_pack_keeps_each_text_under_its_content_hash(course: Path) -> None:
    _check(course)
    kept = _kept_texts(course)
    lesson = (course / LESSON).read_text(encoding="utf-8")
    assert kept[sha256(lesson)] == lesson
    assert all(sha256(str(text)) == key for key, text in kept.items())
    (course / LESSON).write_text(lesson.replace("---\n", "---\n# a comment\n", 1), "utf-8")
    _check(course)
    kept = _kept_texts(course)
    assert sha256(lesson) not in kept  # the pack holds one run's texts, not every version's
    assert sha256((course / LESSON).read_text(encoding="utf-8")) in kept


def test_a_text_is_served_by_content_wherever_it_now_lies(course: Path, reads: list[str]) -> None:
    other = course / OTHER
    other.write_text(other.read_text(encoding="utf-8") + "\nSee [it](chapter:I.99).\n", "utf-8")
    before = _check(course)
    assert f"{OTHER}" in before and LESSON not in before  # the broken link is reported there
    # The lesson takes the other's content: a text the pack holds, under the other's hash.
    shutil.copyfile(other, course / LESSON)
    reads.clear()
    swapped = _check(course)
    assert reads == []
    assert LESSON in swapped  # checked again, with its new content: the link is broken there too
    assert swapped == _check(course, use_cache=False)


def test_a_file_that_does_not_read_is_read_and_reported_every_run(
    course: Path, reads: list[str]
) -> None:
    (course / LESSON).write_bytes((course / LESSON).read_bytes() + b"\x00")
    first = _check(course)
    assert "binary content" in first
    (course / OTHER).write_text(
        (course / OTHER).read_text(encoding="utf-8") + "\nOne sentence more.\n", "utf-8"
    )
    reads.clear()
    second = _check(course)
    assert _relative(course, reads) == sorted([LESSON, OTHER])
    assert "binary content" in second
    assert second == _check(course, use_cache=False)


def test_a_tree_the_digest_cannot_vouch_for_is_read_whole(course: Path, reads: list[str]) -> None:
    _check(course)
    every = len(reads)
    (course / "linked.md").symlink_to(course / LESSON)
    reads.clear()
    linked = _check(course)
    assert len(reads) == every
    assert linked == _check(course, use_cache=False)


def _loaded_courses(monkeypatch: pytest.MonkeyPatch) -> list[Course]:
    """The course each later check loads (as its rules see it)."""
    seen: list[Course] = []
    real = engine.check_loaded

    def kept(project: Project, loaded: LoadResult, *args: object) -> CheckResult:
        seen.append(loaded.course)
        return real(project, loaded, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "check_loaded", kept)
    return seen


def test_the_digests_a_load_takes_from_its_tree_are_its_texts_hashes(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A per-chapter key hashes each text by the digest the lookup took of its bytes: served
    from the pack or read after an edit, every one is the text's own hash."""
    _check(course)
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne sentence more.\n", "utf-8")
    loaded = _loaded_courses(monkeypatch)
    _check(course)
    (edited,) = loaded
    assert set(edited.digests) == set(edited.texts)  # every text the tree vouched for
    assert all(sha256(edited.texts[path]) == d for path, d in edited.digests.items())
    rel = f"course/{LESSON}"
    assert edited.digests[rel] == sha256(lesson.read_text(encoding="utf-8"))  # the edit's
    keys = {c: facts.chapter_digest(edited, chapter) for c, chapter in edited.chapters.items()}
    edited.digests.clear()
    edited.derived.clear()
    assert keys == {c: facts.chapter_digest(edited, ch) for c, ch in edited.chapters.items()}


def test_a_run_without_the_cache_hashes_every_text_itself(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _loaded_courses(monkeypatch)
    _check(course, use_cache=False)
    (cold,) = loaded
    assert cold.texts and cold.digests == {}


# Random changes to the tree between runs ---------------------------------------------------------


def _files(course: Path) -> list[Path]:
    return sorted(p for p in course.rglob("*") if p.is_file())


def _change(rng: random.Random, course: Path, history: list[tuple[Path, bytes]]) -> str:
    """One change an author (or a checkout) makes; what it was, for the failure message."""
    files = _files(course)
    target = rng.choice(files)
    kind = rng.choice(["edit", "edit", "revert", "delete", "copy", "folder", "add", "rename"])
    if kind == "revert" and history:
        path, data = history.pop()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.rmtree(path)
        path.write_bytes(data)
        return f"revert {path}"
    history.append((target, target.read_bytes()))
    if kind in ("edit", "revert"):
        text = target.read_text(encoding="utf-8")
        at = rng.randrange(len(text) + 1)
        target.write_text(
            text[:at] + rng.choice([" word", "\n", "x: 1\n", "]"]) + text[at:], "utf-8"
        )
    elif kind == "delete":
        target.unlink()
    elif kind == "copy":
        source = rng.choice(files)
        if source != target:
            shutil.copyfile(source, target)
    elif kind == "folder":
        target.unlink()
        target.mkdir()
    elif kind == "add":
        _write_new(target.parent / f"added-{rng.randrange(100)}.md")
    else:
        target.rename(target.with_name(f"renamed-{target.name}"))
    return f"{kind} {target}"


def _write_new(path: Path) -> None:
    path.write_text("---\ntitle: An added page\n---\nA sentence.\n", encoding="utf-8")


@pytest.mark.parametrize("seed", range(2))
def test_random_tree_changes_give_what_an_uncached_run_gives(course: Path, seed: int) -> None:
    rng = random.Random(seed)
    history: list[tuple[Path, bytes]] = []
    _check(course)
    for _ in range(6):
        what = _change(rng, course, history)
        assert _check(course) == _check(course, use_cache=False), what
