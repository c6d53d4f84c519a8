"""A load given the tree the run's lookup digested (coursekit.cache_seen.SeenTree) asks it, not
the disk, what the course folder holds, and finds exactly what a load from the disk finds."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coursekit.cache import DiskStore
from coursekit.cache_pack import PackedStore
from coursekit.cache_seen import SeenTree
from coursekit.cache_tree import TreeDigest
from coursekit.load import load_course

BUNDLED = Path(__file__).resolve().parents[2] / "course"
CHAPTER = "II/2-from-recurrence-to-attention"


def _write(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# Each changes the course in a way the loader sees through a listing, not a file it reads.
SHAPES: dict[str, Callable[[Path], None]] = {
    "as bundled": lambda course: None,
    "a stray lesson": lambda c: _write(c / CHAPTER / "lessons" / "stray.md", "---\n---\n"),
    "a hidden stray lesson": lambda c: _write(c / CHAPTER / "lessons" / ".md"),
    "a folder named like a lesson": lambda c: (c / CHAPTER / "lessons" / "odd.md").mkdir(),
    "a listed lesson missing": lambda c: (c / CHAPTER / "lessons" / "model-width.md").unlink(),
    "a listed lesson is a folder": lambda c: _swap_for_folder(
        c / CHAPTER / "lessons/model-width.md"
    ),
    "an unlisted chapter folder": lambda c: _write(c / "II" / "9-extra" / "chapter.yaml"),
    "a chapter folder without its manifest": lambda c: (c / CHAPTER / "chapter.yaml").unlink(),
    "a figure asset missing": lambda c: (c / CHAPTER / "figures" / "path-length.svg").unlink(),
    "an asset deep below": lambda c: _write(c / CHAPTER / "data" / "a" / "b" / "values.csv"),
    # beside the chapter's folder, sorting just before and just after what lies below it
    "folders named as the chapter and more": lambda c: _beside(c / CHAPTER),
    "no lessons folder": lambda c: shutil.rmtree(c / CHAPTER / "lessons"),
    "course.yaml is a folder": lambda c: _swap_for_folder(c / "course.yaml"),
    "no course.yaml": lambda c: (c / "course.yaml").unlink(),
    "a book folder missing": lambda c: shutil.rmtree(c / "I"),
}


def _beside(folder: Path) -> None:
    for more in ("-old", ".d", "0", "_"):
        _write(folder.with_name(folder.name + more) / "notes.txt")


def _swap_for_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _seen(course: Path, store: PackedStore) -> SeenTree:
    tree = TreeDigest(course, course.parent / "stat-table.bin")
    assert tree.compute() is not None
    return SeenTree(store, course, tree.files, tree.folders)


def _found(result: Any) -> tuple[Any, ...]:
    course = result.course
    chapters = {
        chapter_id: (
            sorted(chapter.assets),
            sorted(chapter.lessons),
            sorted(chapter.problems),
            sorted(chapter.exercises),
        )
        for chapter_id, chapter in course.chapters.items()
    }
    return (sorted(result.diagnostics), chapters, dict(course.texts), sorted(course.books))


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_known_tree_loads_what_the_disk_loads(tmp_path: Path, shape: str) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    SHAPES[shape](course)
    from_disk = _found(load_course(course, tmp_path))
    store = PackedStore(DiskStore(tmp_path))
    seen = _seen(course, store)
    assert _found(load_course(course, tmp_path, tree=seen)) == from_disk
    assert not seen.diverged
    # Again, with every text the first load kept: no file is read, and the same is found.
    store.save()
    again = PackedStore(DiskStore(tmp_path))
    seen = _seen(course, again)
    assert _found(load_course(course, tmp_path, tree=seen)) == from_disk
    assert not seen.diverged


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_files_below_a_folder_are_those_its_listing_finds(tmp_path: Path, shape: str) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    SHAPES[shape](course)
    seen = _seen(course, PackedStore(DiskStore(tmp_path)))
    for folder in ["", *sorted(seen.folders)]:
        walked = sorted(
            str(path.relative_to(course)) for path in (course / folder).rglob("*") if path.is_file()
        )
        assert seen.files_below(folder) == walked, folder


def test_the_tree_not_the_disk_answers(tmp_path: Path) -> None:
    """A file added after the tree was digested is not seen; a file removed since is read
    (its text was not kept) and the tree says it diverged."""
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    store = PackedStore(DiskStore(tmp_path))
    seen = _seen(course, store)
    before = _found(load_course(course, tmp_path))
    _write(course / CHAPTER / "lessons" / "late.md", "---\n---\n")
    assert _found(load_course(course, tmp_path, tree=seen)) == before
    assert not seen.diverged
    assert not store.declined
    os.unlink(course / CHAPTER / "lessons" / "model-width.md")
    load_course(course, tmp_path, tree=seen)
    assert seen.diverged
    assert store.declined


def test_a_file_read_with_other_content_than_digested_diverges(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    store = PackedStore(DiskStore(tmp_path))
    seen = _seen(course, store)
    lesson = course / CHAPTER / "lessons" / "model-width.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nLater.\n", encoding="utf-8")
    load_course(course, tmp_path, tree=seen)
    assert seen.diverged
    assert store.declined  # what keeps the run from being recorded


def test_a_file_refused_for_its_content_does_not_diverge(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    lesson = course / CHAPTER / "lessons" / "model-width.md"
    lesson.write_bytes(lesson.read_bytes() + b"\x00")
    store = PackedStore(DiskStore(tmp_path))
    seen = _seen(course, store)
    result = load_course(course, tmp_path, tree=seen)
    assert any("binary content" in d.message for d in result.diagnostics)
    assert not seen.diverged


@pytest.mark.parametrize(
    ("spelt", "inside"),
    [
        ("course/I/book.yaml", "I/book.yaml"),
        ("course/I/./book.yaml", "I/book.yaml"),
        ("course/I//book.yaml", "I/book.yaml"),
        ("course/I/x/../book.yaml", "I/book.yaml"),
        ("course/I/.hidden", "I/.hidden"),
        ("course/I/", "I"),
        ("course", ""),
        ("course/../elsewhere/book.yaml", None),
        ("courses/I/book.yaml", None),
    ],
)
def test_a_path_is_inside_the_course_as_normpath_spells_it(
    tmp_path: Path, spelt: str, inside: str | None
) -> None:
    from coursekit.load.listing import Listing

    store = PackedStore(DiskStore(tmp_path))
    (tmp_path / "course").mkdir()
    listing = Listing(tmp_path / "course", SeenTree(store, tmp_path / "course", {}, set()))
    assert listing.inside(Path(f"{tmp_path}/{spelt}")) == inside
