"""Unsaved buffers (the language server's overlays) are read in place of the files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import LESSON
from coursekit.engine import check
from coursekit.project import find_project

BROKEN = LESSON.replace("Body text.", "See [it](apparatus:0.LA.99).")


def _seen(course: Path, overlays: dict[Path, str] | None = None) -> list[tuple[str, int, int, str]]:
    result = check(find_project(course.parent), overlays=overlays)
    return [(d.code, d.line, d.column, d.message) for d in result.diagnostics]


def test_an_overlay_is_checked_exactly_as_the_same_text_on_disk(tiny_course: Path) -> None:
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    from_buffer = _seen(tiny_course, {lesson: BROKEN})
    assert lesson.read_text(encoding="utf-8") == LESSON, "an overlay never reaches the disk"
    lesson.write_text(BROKEN, encoding="utf-8")
    assert from_buffer == _seen(tiny_course)
    assert [code for code, *_ in from_buffer] == ["CK504"]


def test_without_overlays_check_reads_the_disk(tiny_course: Path) -> None:
    assert _seen(tiny_course) == _seen(tiny_course, {}) == []


def test_an_overlay_path_is_matched_however_it_is_spelled(tiny_course: Path) -> None:
    spelled = tiny_course / "I" / ".." / "I/1-first/lessons/intro.md"
    assert [c for c, *_ in _seen(tiny_course, {spelled: BROKEN})] == ["CK504"]


def test_an_unsaved_new_lesson_is_loaded_from_its_buffer(tiny_course: Path) -> None:
    chapter = tiny_course / "I/1-first/chapter.yaml"
    listed = chapter.read_text(encoding="utf-8") + "  - lesson: second\n"
    new = tiny_course / "I/1-first/lessons/second.md"
    seen = _seen(tiny_course, {chapter: listed, new: BROKEN})
    assert [(c, line) for c, line, *_ in seen] == [("CK504", 6)]
    assert not new.exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("---\ntitle: x\n---\nab\x00c", (4, 3)),  # a binary paste
        ("---\ntitle: \ud800\n---\n", (2, 8)),  # a lone surrogate: JSON can carry one
    ],
)
def test_an_unreadable_buffer_is_ck102_at_its_place(
    tiny_course: Path, text: str, where: tuple[int, int]
) -> None:
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    seen = _seen(tiny_course, {lesson: text})
    assert [(c, line, col) for c, line, col, _ in seen if c == "CK102"] == [("CK102", *where)]
