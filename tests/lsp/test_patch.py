"""A keystroke in a lesson patches that lesson into the last load (coursekit.lsp.patch); any
other change loads the course again. Either way the diagnostics are what `check` reports."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import coursekit.load
from coursekit.engine import check
from coursekit.lsp import state as state_module
from coursekit.lsp.state import CourseState
from coursekit.options import Options
from coursekit.project import find_project
from helpers import SharedVerdicts

BUNDLED = Path(__file__).resolve().parents[2] / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(BUNDLED, tmp_path / "course")
    return tmp_path


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the state loaded the course from the files."""
    counted: list[int] = []
    real = coursekit.load.load_course  # the function the state module imported

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(state_module, "load_course", counting)
    return counted


NO_PROGRAMS = Options(exec=False)  # a keystroke runs no program (they run on save)


def _state(root: Path) -> CourseState:
    # sympy's verdicts are shared by key (helpers.SharedVerdicts): each test starts with no
    # rule result kept, and does not verify the course again
    return CourseState(find_project(root), store=SharedVerdicts())


def _opened(root: Path) -> tuple[CourseState, Path, str]:
    """A state that has checked the course once with the lesson open as it is on disk."""
    state = _state(root)
    lesson = root / "course" / LESSON
    text = lesson.read_text(encoding="utf-8")
    state.open(lesson, text)
    state.analyse()
    return state, lesson, text


def _same_as_check(state: CourseState, root: Path) -> None:
    fresh = check(
        find_project(root),
        options=NO_PROGRAMS,
        store=SharedVerdicts(),
        overlays=dict(state.buffers),
    )
    assert state.snapshot is not None
    assert state.snapshot.result.diagnostics == fresh.diagnostics


def test_keystrokes_in_a_lesson_patch_it_in_without_loading(root: Path, loads: list[int]) -> None:
    state, lesson, text = _opened(root)
    assert len(loads) == 1
    broken = text.replace("(lesson:II.2/goodbye-to-recurrence)", "(lesson:II.2/goodbye)")
    assert broken != text
    for typed in (text + "\nA sentence.\n", broken, broken.replace("value: 524288", "value: 7")):
        state.open(lesson, typed)
        state.analyse()
        _same_as_check(state, root)
    assert len(loads) == 1  # every keystroke was patched in
    codes = {d.code for d in state.analyse().result.diagnostics}
    assert {"CK501", "CK804"} <= codes


def test_a_lesson_that_no_longer_parses_is_loaded_again(root: Path, loads: list[int]) -> None:
    state, lesson, text = _opened(root)
    state.open(lesson, text.replace("reading_time: ", "reading_time: [", 1))
    state.analyse()
    assert len(loads) == 2  # the loader reports why it does not load
    _same_as_check(state, root)
    state.open(lesson, text)
    state.analyse()
    assert len(loads) == 3  # it had a diagnostic: loaded again, not patched
    _same_as_check(state, root)


def test_a_file_added_or_changed_on_disk_loads_the_course_again(
    root: Path, loads: list[int]
) -> None:
    state, lesson, text = _opened(root)
    stray = lesson.parent / "a-stray-lesson.md"
    stray.write_text("---\ntitle: Stray\nstrand: basics\n---\nText.\n", encoding="utf-8")
    state.open(lesson, text + "\nA sentence.\n")
    state.analyse()
    assert len(loads) == 2
    _same_as_check(state, root)
    chapter = root / "course/II/2-from-recurrence-to-attention/chapter.yaml"
    chapter.write_text(chapter.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    state.open(lesson, text)
    state.analyse()
    assert len(loads) == 3
    _same_as_check(state, root)


def test_an_edited_manifest_buffer_loads_the_course_again(root: Path, loads: list[int]) -> None:
    state = _state(root)
    chapter = root / "course/II/2-from-recurrence-to-attention/chapter.yaml"
    text = chapter.read_text(encoding="utf-8")
    state.open(chapter, text)
    state.analyse()
    state.open(chapter, text.replace("status: draft", "status: published"))
    state.analyse()
    assert len(loads) == 2
    _same_as_check(state, root)


def test_only_open_files_and_changed_diagnostics_are_published_again(root: Path) -> None:
    state = _state(root)
    lesson = root / "course" / LESSON
    text = lesson.read_text(encoding="utf-8")
    state.open(lesson, text)
    first = dict(state.to_publish(state.analyse()))
    rel = f"course/{LESSON}"
    others = [path for path, found in first.items() if found and path != rel]
    assert others  # the bundled course has findings in files that are not open
    state.open(lesson, text + "\nA sentence.\n")
    again = dict(state.to_publish(state.analyse()))
    assert list(again) == [rel]  # the others' diagnostics did not change: not sent again
    broken = text.replace("(lesson:II.2/goodbye-to-recurrence)", "(lesson:II.2/goodbye)")
    state.open(lesson, broken)
    found = dict(state.to_publish(state.analyse()))
    assert "CK501" in {d.code for d in found[rel]}


def test_a_patched_lesson_keeps_no_digest_of_its_old_text(root: Path) -> None:
    """A digest stands for the text the load read; the buffer's text is another."""
    from coursekit.lsp.patch import patched

    project = find_project(root / "course", root / "course")
    loaded = coursekit.load.load_course(project.course_dir, project.root)
    rel = f"course/{LESSON}"
    other = next(path for path in loaded.course.texts if path.endswith(".md") and path != rel)
    loaded.course.digests.update({rel: "old", other: "kept"})
    lesson = project.course_dir / LESSON
    text = lesson.read_text(encoding="utf-8") + "\nA sentence.\n"
    result = patched(loaded, {lesson: text}, project.course_dir, project.root, {})
    assert result is not None and result.course.texts[rel] == text
    assert result.course.digests == {other: "kept"}
