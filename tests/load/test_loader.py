"""The loader turns any input, however broken, into located diagnostics: never a traceback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import CHAPTER, LESSON, make_course
from coursekit.load import load_course


def codes_at(course: Path) -> list[tuple[str, str, int]]:
    result = load_course(course, course.parent)
    return [(d.code, d.path, d.line) for d in result.diagnostics]


def test_a_well_formed_course_loads_cleanly(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    result = load_course(course, tmp_path)
    assert result.diagnostics == []
    chapter = result.course.chapters["I.1"]
    assert list(chapter.lessons) == ["intro"]
    assert chapter.manifest.loc("thesis").line == 3
    assert chapter.manifest.loc("items", 0, "lesson").column == 13
    lesson = chapter.lessons["intro"]
    assert lesson.meta.loc("reading_time").line == 4  # front matter lines are file lines
    assert lesson.body_loc(0).line == 6


CHAPTER_FILE = "I/1-first/chapter.yaml"


@pytest.mark.parametrize(
    ("name", "content", "code", "line"),
    [
        ("empty file", b"", "CK104", 1),
        ("binary junk", b"\x89PNG\r\n\x1a\n\x00\x00junk", "CK102", 3),
        ("invalid UTF-8", b"id: I.1\ntitle: caf\xe9\n", "CK102", 2),
        ("a list where a mapping belongs", b"- id: I.1\n- title: x\n", "CK104", 1),
        ("syntax error", b"id: I.1\ntitle: [unclosed\ndek: x\n", "CK101", 3),
        ("tab indentation", b"id: I.1\n\ttitle: x\n", "CK101", 2),
        ("duplicate key", b"id: I.1\nid: I.2\n", "CK101", 2),
        ("two documents", b"id: I.1\n---\nid: I.2\n", "CK101", 2),
        ("unknown key", CHAPTER.replace("dek:", "deck:").encode(), "CK103", 4),
        ("missing key", CHAPTER.replace("thesis: Things happen.\n", "").encode(), "CK105", 1),
        ("wrong type", CHAPTER.replace("maturity: M0", "maturity: [M0]").encode(), "CK104", 6),
        ("bad status", CHAPTER + b"status: finished\n".decode(), "CK104", 9),
    ],
)
def test_malformed_chapter_is_a_located_diagnostic(
    tmp_path: Path, name: str, content: bytes | str, code: str, line: int
) -> None:
    course = make_course(tmp_path)
    data = content.encode() if isinstance(content, str) else content
    (course / CHAPTER_FILE).write_bytes(data)
    found = codes_at(course)
    assert (code, f"course/{CHAPTER_FILE}", line) in found, (name, found)


def test_unknown_key_suggests_the_close_one(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    (course / CHAPTER_FILE).write_text(CHAPTER.replace("thesis:", "tesis:"))
    messages = [d.message for d in load_course(course, tmp_path).diagnostics]
    assert "unknown key 'tesis'; did you mean 'thesis'?" in messages


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    (course / CHAPTER_FILE).write_text("\n".join(lines) + "\n")
    start = time.perf_counter()
    found = codes_at(course)
    assert time.perf_counter() - start < 30  # a guard against a hang, not a speed target
    assert any(code == "CK101" for code, _, _ in found)


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "a: " + "{b: " * 10_000 + "c" + "}" * 10_000 + "\n",
        "- " * 10_000 + "x\n",
        # as deep as fits under the size cap: one space more per level
        "".join(" " * level + "k:\n" for level in range(2_500)),
    ],
    ids=["flow lists", "flow mappings", "block sequences", "block mappings"],
)
def test_deep_nesting_is_refused(tmp_path: Path, text: str) -> None:
    course = make_course(tmp_path)
    (course / CHAPTER_FILE).write_text(text)
    start = time.perf_counter()
    found = codes_at(course)
    assert time.perf_counter() - start < 30  # a guard against a hang, not a speed target
    assert [code for code, _, _ in found] == ["CK101"]


def test_huge_file_is_refused_without_reading(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    with (course / CHAPTER_FILE).open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # 50 MB, sparse
    start = time.perf_counter()
    found = codes_at(course)
    assert time.perf_counter() - start < 30  # a guard against a hang, not a speed target
    assert ("CK102", f"course/{CHAPTER_FILE}", 1) in found


def test_symlink_out_of_the_tree_is_not_followed(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text(LESSON)
    lesson = course / "I/1-first/lessons/intro.md"
    lesson.unlink()
    os.symlink(secret, lesson)
    result = load_course(course, tmp_path)
    assert [d.code for d in result.diagnostics] == ["CK102"]
    assert "outside the course" in result.diagnostics[0].message
    assert "course/I/1-first/lessons/intro.md" in result.diagnostics[0].path


def test_lesson_without_front_matter(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    (course / "I/1-first/lessons/intro.md").write_text("# Just a body\n")
    assert ("CK105", "course/I/1-first/lessons/intro.md", 1) in codes_at(course)


def test_front_matter_errors_point_at_file_lines(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    (course / "I/1-first/lessons/intro.md").write_text(
        LESSON.replace("reading_time: 3", "reading_time: soon")
    )
    assert ("CK104", "course/I/1-first/lessons/intro.md", 4) in codes_at(course)


def test_listed_but_missing_and_unlisted_files(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    (course / "I/1-first/lessons/intro.md").rename(course / "I/1-first/lessons/other.md")
    found = codes_at(course)
    assert ("CK109", f"course/{CHAPTER_FILE}", 8) in found
    assert ("CK110", "course/I/1-first/lessons/other.md", 1) in found


def test_loading_never_writes(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    (course / CHAPTER_FILE).write_text("id: [\n")
    before = {p: p.stat().st_mtime_ns for p in course.rglob("*")}
    load_course(course, tmp_path)
    assert {p: p.stat().st_mtime_ns for p in course.rglob("*")} == before
