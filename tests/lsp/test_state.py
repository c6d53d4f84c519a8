"""The server's view of the course: the disk, every open buffer, and what changed since."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import LESSON
from coursekit import cache_stats
from coursekit.lsp.state import CourseState
from coursekit.project import find_project

BROKEN = LESSON.replace("Body text.", "See [it](apparatus:0.LA.99).")
REL = "course/I/1-first/lessons/intro.md"


def _codes(state: CourseState) -> list[str]:
    return [d.code for d in state.analyse().result.diagnostics]


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the fixture count as settled (not racily clean): the memo keeps them."""
    monkeypatch.setattr(cache_stats, "RACY_NS", 0)


def test_a_file_changed_on_disk_is_read_again_and_an_unchanged_one_is_not(
    tiny_course: Path, settled: None
) -> None:
    state = CourseState(find_project(tiny_course.parent))
    assert _codes(state) == []
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    assert state.absolute(REL) in state.disk  # remembered with its stamp
    lesson.write_text(BROKEN, encoding="utf-8")
    stat = lesson.stat()
    os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns - 5_000_000_000))
    assert _codes(state) == ["CK504"]
    lesson.write_text(LESSON, encoding="utf-8")
    assert _codes(state) == []


def test_an_edit_of_the_same_size_with_its_mtime_put_back_is_seen(
    tiny_course: Path, settled: None
) -> None:
    """`touch -d` after a same-size edit: the change time, which no user can set, differs."""
    state = CourseState(find_project(tiny_course.parent))
    assert _codes(state) == []
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    assert state.absolute(REL) in state.disk
    before = lesson.stat()
    text = lesson.read_text(encoding="utf-8")
    edited = text.replace("reading_time: 3", "reading_time: x")
    assert len(edited) == len(text)
    lesson.write_text(edited, encoding="utf-8")
    os.utime(lesson, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (lesson.stat().st_size, lesson.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    assert "CK104" in _codes(state)


def test_a_file_written_just_before_a_check_is_not_kept(tiny_course: Path) -> None:
    """Racily clean (git's rule): a second same-tick write could leave its stamp unchanged."""
    state = CourseState(find_project(tiny_course.parent))
    _codes(state)
    assert state.absolute(REL) not in state.disk  # the fixture wrote it a moment ago
    assert state.snapshot is not None and REL in state.snapshot.course.texts


def test_a_buffer_wins_over_the_disk_until_it_is_closed(tiny_course: Path) -> None:
    state = CourseState(find_project(tiny_course.parent))
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    state.open(lesson, BROKEN)
    snapshot = state.analyse()
    assert [d.code for d in snapshot.result.diagnostics] == ["CK504"]
    assert list(state.to_publish(snapshot)) == [(REL, snapshot.by_path[REL])]
    state.close(lesson)
    snapshot = state.analyse()
    assert snapshot.result.diagnostics == []
    # the lesson's finding is gone: it is published once more, empty, to clear it
    assert list(state.to_publish(snapshot)) == [(REL, [])]
    assert list(state.to_publish(snapshot)) == []


def test_program_findings_from_the_last_save_survive_keystrokes(tmp_path: Path) -> None:
    import shutil

    golden = Path(__file__).resolve().parents[1] / "golden/course"
    shutil.copytree(golden, tmp_path / "course")
    problem = tmp_path / "course/I/1-first-steps/problems/count-tokens/problem.yaml"
    problem.write_text(problem.read_text(encoding="utf-8").replace("value: 4", "value: 5"))
    state = CourseState(find_project(tmp_path))
    saved = [d.code for d in state.analyse(run_programs=True).result.diagnostics]
    assert "CK907" in saved
    typed = state.analyse()  # a keystroke: no program runs, the finding stays
    assert [d.code for d in typed.by_path[problem.relative_to(tmp_path).as_posix()]] == ["CK907"]
    problem.write_text(problem.read_text(encoding="utf-8").replace("value: 5", "value: 4"))
    assert "CK907" not in [d.code for d in state.analyse(run_programs=True).result.diagnostics]
    assert problem.relative_to(tmp_path).as_posix() not in state.analyse().by_path


def test_an_edit_validates_the_edited_document_only(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps the validated documents of its last check (`CourseState.models`)."""
    from coursekit.engine import check
    from coursekit.load import reader

    state = CourseState(find_project(tiny_course.parent))
    state.analyse()
    validated: list[str] = []
    real = vars(reader)["validate"]

    def counted(kind: type, data: object, source: object) -> object:
        validated.append(kind.__name__)
        return real(kind, data, source)

    monkeypatch.setattr(reader, "validate", counted)
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    state.open(lesson, BROKEN)
    snapshot = state.analyse()
    assert validated == []  # the lesson's front matter did not change: nothing re-validated
    state.open(lesson, BROKEN.replace("reading_time: 3", "reading_time: 4"))
    snapshot = state.analyse()
    assert validated == ["LessonFrontMatter"]
    fresh = check(find_project(tiny_course.parent), overlays=dict(state.buffers))
    assert [d.code for d in snapshot.result.diagnostics] == [d.code for d in fresh.diagnostics]


def test_a_keystroke_stats_nothing_while_the_watch_saw_no_change(
    tiny_course: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.lsp import patch
    from coursekit.lsp import state as state_module

    taken: list[Path] = []
    real = patch.disk_table

    def counted(folder: Path) -> dict[str, tuple[int, ...]]:
        taken.append(folder)
        return real(folder)

    monkeypatch.setattr(state_module, "disk_table", counted)
    state = CourseState(find_project(tiny_course.parent))
    assert state.watch is not None
    assert _codes(state) == []
    lesson = tiny_course / "I/1-first/lessons/intro.md"
    state.open(lesson, BROKEN)  # a keystroke: the disk is as it was
    assert _codes(state) == ["CK504"]
    assert len(taken) == 1
    state.close(lesson)
    lesson.write_text(BROKEN, encoding="utf-8")  # the disk changed: the table is taken again
    assert _codes(state) == ["CK504"]
    assert len(taken) == 2
    lesson.write_text(LESSON, encoding="utf-8")
    assert _codes(state) == []


def test_without_a_watch_the_table_is_taken_every_time(
    tiny_course: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.lsp import state as state_module
    from coursekit.watch import WatchUnavailable

    def unavailable(root: object) -> None:
        raise WatchUnavailable("not here")

    monkeypatch.setattr(state_module, "TreeWatch", unavailable)
    state = CourseState(find_project(tiny_course.parent))
    assert state.watch is None
    assert _codes(state) == []
    (tiny_course / "I/1-first/lessons/intro.md").write_text(BROKEN, encoding="utf-8")
    assert _codes(state) == ["CK504"]
