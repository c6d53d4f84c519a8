"""coursekit.rules.facts: what a per-chapter result is kept under, and what outlives an edit."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from coursekit.load import load_course
from coursekit.model.tree import Chapter, Course
from coursekit.rules import facts
from coursekit.rules.carried import carried_past_manifests
from coursekit.rules.facts import FACTS, PER_CHAPTER, Fact, chapter_key

BUNDLED = Path(__file__).resolve().parent.parent.parent / "course"


@pytest.fixture(scope="module")
def course() -> Course:
    loaded = load_course(BUNDLED, BUNDLED.parent)
    assert len(loaded.course.chapters) > 2
    return loaded.course


def _each_alone(course: Course, name: str) -> set[str]:
    """The fact's digest for each chapter, each worked out with nothing derived before it."""
    values = set()
    for chapter in course.chapters.values():
        course.derived.clear()
        values.add(FACTS[name](course, chapter))
    course.derived.clear()
    return values


@pytest.mark.parametrize("name", sorted(FACTS))
def test_only_what_a_chapter_links_differs_from_chapter_to_chapter(
    course: Course, name: str
) -> None:
    # `fact` works out a fact outside PER_CHAPTER once per course: it must be the same for all
    values = _each_alone(course, name)
    if name in PER_CHAPTER:
        assert len(values) > 1, f"{name} is the same for every chapter of the bundled course"
    else:
        assert len(values) == 1, f"{name} differs between chapters but is not in PER_CHAPTER"


def test_a_fact_the_same_for_every_chapter_is_worked_out_once_per_course(
    course: Course, monkeypatch: pytest.MonkeyPatch
) -> None:
    worked_out: Counter[str] = Counter()
    for name, real in list(FACTS.items()):

        def counting(
            course: Course, chapter: Chapter, _name: str = name, _real: Fact = real
        ) -> str:
            worked_out[_name] += 1
            return _real(course, chapter)

        monkeypatch.setitem(FACTS, name, counting)
    course.derived.clear()
    keys = {chapter_key(course, chapter, sorted(FACTS)) for chapter in course.chapters.values()}
    course.derived.clear()
    assert len(keys) == len(course.chapters)  # each chapter's own digest is in its key
    chapters = len(course.chapters)
    assert worked_out == {n: chapters if n in PER_CHAPTER else 1 for n in FACTS}


def test_a_book_manifest_edit_keeps_the_keys_and_summaries_that_read_none_of_it() -> None:
    read, unread = "book0_linked", "chapter_ids"
    derived: dict[object, object] = {
        ("facts", "files"): "files",
        ("facts", "chapter", "I.1"): "its digest",
        ("facts", "chapter", "I.1", "key"): "of its digest alone",
        ("facts", "chapter", "I.1", "key", unread): "and of the chapter ids",
        ("facts", "chapter", "I.1", "key", unread, read): "and of what it links",
        ("facts", "summary", "supports", "I.1"): ["of its files alone"],
        ("facts", "summary", "links", "I.1", unread): ["and the chapter ids"],
        ("facts", "summary", "titles", "I.1", read): ["and what it links"],
        (*facts.MANIFESTS, unread): "chapter ids",
        (*facts.MANIFESTS, "of", unread): "chapter ids, for every chapter",
        (*facts.MANIFESTS, "of", read, "I.1"): "what I.1 links",
        (*facts.MANIFESTS, "book0"): "Book 0's entries",
        (*facts.MANIFESTS, "same", (unread,)): ["chapter ids"],
        ("lessons", "I.1"): "a rule's own view",
        "a string": "not a fact",
    }
    kept = carried_past_manifests(derived)
    assert set(kept) == {
        ("facts", "files"),
        ("facts", "chapter", "I.1"),
        ("facts", "chapter", "I.1", "key"),
        ("facts", "chapter", "I.1", "key", unread),
        ("facts", "summary", "supports", "I.1"),
        ("facts", "summary", "links", "I.1", unread),
        (*facts.MANIFESTS, unread),
        (*facts.MANIFESTS, "of", unread),
    }
    assert all(kept[key] is derived[key] for key in kept)


def test_a_chapters_files_are_the_texts_below_its_folder_and_what_it_lists() -> None:
    """Texts in folders named as a chapter's and more (sorting just before and after what
    lies below it), the folder's own name as a file, a chapter nested in another's folder."""
    course = load_course(BUNDLED, BUNDLED.parent).course
    chapters = list(course.chapters.values())
    first = chapters[0]
    nested = Chapter(first.manifest, first.book_id, f"{first.dir}/inner", "inner.yaml")
    course.chapters["nested"] = nested
    for chapter in chapters[:2]:
        for more in ("-old/x.md", ".d/y", "0/z", "_/w", "/deep/a/b.txt", ""):
            course.texts[chapter.dir + more] = "text"
    course.texts[f"{first.dir}/inner/own.md"] = "text"

    def below(path: str, folder: str) -> bool:
        parents = path.split("/")[:-1]
        return any("/".join(parents[:n]) == folder for n in range(1, len(parents) + 1))

    found = facts.files_by_chapter(course)
    for chapter_id, chapter in course.chapters.items():
        texts = {path for path in course.texts if below(path, chapter.dir)}
        assert found[chapter_id] == sorted(texts | facts._listed(chapter)), chapter_id
    assert f"{first.dir}/inner/own.md" in found["nested"]
    assert f"{first.dir}/inner/own.md" in found[first.id]
    assert f"{first.dir}-old/x.md" not in found[first.id]


def _digest_of(course: Course, chapter: Any) -> str:
    course.derived.clear()
    try:
        return facts.chapter_digest(course, chapter)
    finally:
        course.derived.clear()


def test_a_chapters_digest_moves_with_each_of_its_inputs(
    course: Course, monkeypatch: pytest.MonkeyPatch
) -> None:
    chapter = next(iter(course.chapters.values()))
    files = facts.chapter_files(course, chapter)
    monkeypatch.setattr(facts, "chapter_files", lambda _course, _chapter: files)

    def like(**changes: Any) -> SimpleNamespace:
        fields = {"id": chapter.id, "book_id": chapter.book_id, "dir": chapter.dir}
        return SimpleNamespace(**{**fields, "assets": chapter.assets, **changes})

    before = _digest_of(course, like())
    assert before == _digest_of(course, chapter)
    changed = {
        "id": _digest_of(course, like(id=chapter.id + "x")),
        "book": _digest_of(course, like(book_id=chapter.book_id + "x")),
        "dir": _digest_of(course, like(dir=chapter.dir + "x")),
        "asset": _digest_of(course, like(assets=chapter.assets | {"x.png"})),
        # the head's fields cannot trade characters (each is written after its length)
        "id\\0": _digest_of(course, like(id="a\0b", book_id="c")),
        "\\0book": _digest_of(course, like(id="a", book_id="b\0c")),
    }
    path = files[0]
    text, known = course.texts[path], course.digests.get(path)
    try:
        course.texts[path] = text + " "
        course.digests.pop(path, None)
        changed["text"] = _digest_of(course, chapter)
        del course.texts[path]  # a file it lists that did not load
        changed["unread"] = _digest_of(course, chapter)
    finally:
        course.texts[path] = text
        if known is not None:
            course.digests[path] = known
    assert before == _digest_of(course, chapter)
    assert before not in changed.values() and len(set(changed.values())) == len(changed), changed
