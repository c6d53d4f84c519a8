"""A course kept loaded between runs (coursekit.resident, the daemon's): after any edit it
reports exactly what a fresh check of the disk reports, doing only what the edit needs."""

from __future__ import annotations

import io
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coursekit.commands import check as check_command
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.resident import ResidentCourse
from test_cache_pack import BUNDLED, LESSON

BOOK0 = "0/book.yaml"
OPTIONS = Options(exec=False, formulas=False)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BUNDLED, tmp_path / "course"))


@pytest.fixture
def resident(course: Path) -> Iterator[ResidentCourse]:
    kept = ResidentCourse(find_project(course, course))
    yield kept
    kept.close()


def _fresh(course: Path, options: Options = OPTIONS) -> tuple[str, int]:
    """What a check of the disk as it is reports, with no cache at all."""
    out = io.StringIO()
    code = check_command.run(find_project(course, course), [], "json", out, False, options)
    return out.getvalue(), code


def _kept(resident: ResidentCourse, course: Path, options: Options = OPTIONS) -> tuple[str, int]:
    out = io.StringIO()
    code = resident.run(find_project(course, course), [], "json", out, False, options)
    return out.getvalue(), code


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _prose(course: Path, n: int) -> None:
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    # an undeclared symbol: a finding that moves with each take
    added = "\n" * (n + 2) + f"An added sentence uses $q_z$, take {n}.\n"
    lesson.write_text(text.rstrip("\n") + added, "utf-8")


def _saved_through_a_temporary(course: Path) -> None:
    """As `sed -i` and many editors save: a new file beside it, renamed over it."""
    lesson = course / LESSON
    temporary = lesson.with_name(".model-width.md.tmp")
    saved = lesson.read_text(encoding="utf-8") + "\nSaved anew with $q_y$.\n"
    temporary.write_text(saved, "utf-8")
    temporary.replace(lesson)


def _bad_front_matter(course: Path) -> None:
    _replace(course / LESSON, "\n---", "\nsummary: [unclosed\n---")


def _title(course: Path) -> None:
    _replace(course / BOOK0, "title: Entropy\n", "title: Entropy, renamed\n")


def _stray(course: Path) -> None:
    (course / LESSON).with_name("stray.md").write_text("not listed\n", encoding="utf-8")


def _lesson_gone(course: Path) -> None:
    (course / LESSON).unlink()


EDITS: dict[str, Callable[[Path], None]] = {
    "prose": lambda c: _prose(c, 1),
    "saved-through-a-temporary": _saved_through_a_temporary,
    "front-matter-that-does-not-parse": _bad_front_matter,
    "book-0-title": _title,
    "a-file-added": _stray,
    "a-lesson-removed": _lesson_gone,
}


def test_a_first_run_reports_what_a_fresh_check_does(
    resident: ResidentCourse, course: Path
) -> None:
    assert _kept(resident, course) == _fresh(course)
    assert resident.loads == 1


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_after_an_edit_it_reports_what_a_fresh_check_does(
    resident: ResidentCourse, course: Path, edit: str
) -> None:
    before = _kept(resident, course)
    EDITS[edit](course)
    after = _kept(resident, course)
    assert after == _fresh(course)
    assert after != before, "the edit changed nothing a check reports: not a test of it"


def test_one_lesson_edited_is_patched_in_not_loaded_again(
    resident: ResidentCourse, course: Path
) -> None:
    _kept(resident, course)
    for n in range(3):
        _prose(course, n)
        assert _kept(resident, course) == _fresh(course)
    _saved_through_a_temporary(course)  # the temporary came and went: still one lesson
    assert _kept(resident, course) == _fresh(course)
    assert (resident.loads, resident.patches) == (1, 4)


def test_a_lesson_that_stops_loading_is_loaded_again_then_mended(
    resident: ResidentCourse, course: Path
) -> None:
    clean = _kept(resident, course)
    text = (course / LESSON).read_text(encoding="utf-8")
    _bad_front_matter(course)
    broken = _kept(resident, course)
    assert broken == _fresh(course)
    assert "CK1" in broken[0]
    (course / LESSON).write_text(text, encoding="utf-8")
    assert _kept(resident, course) == clean
    assert resident.patches == 0  # neither the broken lesson nor its mending is patched in


def test_nothing_changed_replays_the_last_output_without_running_the_rules(
    resident: ResidentCourse, course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _kept(resident, course)
    calls: list[object] = []
    real = check_command.run

    def counted(*args: Any, **kwargs: Any) -> int:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(check_command, "run", counted)
    assert _kept(resident, course) == first
    assert calls == []
    _prose(course, 7)
    edited = _kept(resident, course)
    assert len(calls) == 1
    assert edited == _fresh(course)


def test_a_run_that_declined_a_result_is_not_replayed(
    resident: ResidentCourse, course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = check_command.run

    def declining(*args: Any, **kwargs: Any) -> int:
        args[6].decline("verdicts", "k", "a timeout")  # the store, as a rule would
        return real(*args, **kwargs)

    monkeypatch.setattr(check_command, "run", declining)
    first = _kept(resident, course)
    assert resident.kept is None
    monkeypatch.setattr(check_command, "run", real)
    assert _kept(resident, course) == first  # run again, on the course it holds
    assert resident.kept is not None and resident.loads == 1


def test_a_watch_that_lost_track_loads_the_course_again(
    resident: ResidentCourse, course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kept(resident, course)
    monkeypatch.setattr(resident.watch, "changes", lambda: None)
    _prose(course, 3)
    assert _kept(resident, course) == _fresh(course)
    assert resident.loads == 2


def test_a_claims_new_value_is_verified_again(resident: ResidentCourse, course: Path) -> None:
    options = Options(exec=False)
    clean = _kept(resident, course, options)
    lesson = course / "II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"
    text = lesson.read_text(encoding="utf-8")
    assert "value: 524288" in text, "the lesson's claim this test changes"
    lesson.write_text(text.replace("value: 524288", "value: 524289", 1), encoding="utf-8")
    wrong = _kept(resident, course, options)
    assert wrong == _fresh(course, options)
    assert wrong[1] == 1 and clean[1] == 0
    lesson.write_text(text, encoding="utf-8")
    assert _kept(resident, course, options) == clean


def test_a_reload_lets_the_last_course_and_its_parses_go(
    resident: ResidentCourse, course: Path
) -> None:
    _kept(resident, course)
    old = resident.loaded
    assert old is not None and old.course.derived  # what the rules derived from it
    assert not any(key[0] == "yaml" for key in resident.store.memory)
    _stray(course)
    assert _kept(resident, course) == _fresh(course)
    assert resident.loaded is not old and resident.loads == 2
    # what the rules derived refers back to the course: cleared, nothing waits for a collection
    assert old.course.derived == {}
    assert not any(key[0] == "yaml" for key in resident.store.memory)
    # a second reload: the parses it let go of are not needed
    (course / LESSON).with_name("stray.md").unlink()
    assert _kept(resident, course) == _fresh(course)
    assert resident.loads == 3


def test_a_renamed_book_0_title_is_patched_in(resident: ResidentCourse, course: Path) -> None:
    before = _kept(resident, course)
    _title(course)
    assert _kept(resident, course) == _fresh(course) != before
    _replace(course / BOOK0, "title: Entropy, renamed\n", "title: Entropy\n")
    assert _kept(resident, course) == before
    assert (resident.loads, resident.patches) == (1, 2)


def _chapter_unlisted(course: Path) -> None:
    _replace(
        course / "I" / "book.yaml", "chapters: [I.1, I.2, I.3, I.4]", "chapters: [I.1, I.2, I.3]"
    )


def _book_invalid(course: Path) -> None:
    _replace(course / BOOK0, "title: Entropy\n", "title: [Entropy\n")


@pytest.mark.parametrize("edit", [_chapter_unlisted, _book_invalid], ids=["chapters", "invalid"])
def test_a_book_manifest_that_changes_more_than_its_text_loads_again(
    resident: ResidentCourse, course: Path, edit: Callable[[Path], None]
) -> None:
    before = _kept(resident, course)
    edit(course)
    assert _kept(resident, course) == _fresh(course) != before
    assert (resident.loads, resident.patches) == (2, 0)


def _toggle(path: Path, one: str, other: str) -> None:
    text = path.read_text(encoding="utf-8")
    if one in text:
        path.write_text(text.replace(one, other, 1), encoding="utf-8")
    else:
        _replace(path, other, one)


def _moved_away(course: Path) -> None:
    lesson, kept = course / LESSON, course.parent / "kept.md"
    if lesson.exists():
        shutil.move(lesson, kept)
    else:
        shutil.move(kept, lesson)


SEQUENCED: list[Callable[[Path], None]] = [
    lambda c: _prose(c, 9),
    lambda c: _toggle(c / BOOK0, "title: Entropy\n", "title: Entropy, renamed\n"),
    lambda c: _toggle(c / LESSON, "\n---\n", "\nsummary: [x\n---\n"),
    lambda c: _toggle(c / "I/book.yaml", "[I.1, I.2, I.3, I.4]", "[I.1, I.2, I.3]"),
    lambda c: _toggle(c / "course.yaml", "title: Machines That Read", "title: Machines"),
    _saved_through_a_temporary,
    _moved_away,
]


@pytest.mark.parametrize("seed", [0, 1])
def test_any_sequence_of_edits_reports_what_a_fresh_check_does(
    resident: ResidentCourse, course: Path, seed: int
) -> None:
    # Interleaved, so that a patched-in edit lands on a course loaded again, and the reverse.
    # (By hand: 100 single edits over ten seeds and 24 with sympy and programs on, none apart.)
    rng = random.Random(seed)
    _kept(resident, course)
    for _ in range(5):
        rng.choice(SEQUENCED)(course)
        assert _kept(resident, course) == _fresh(course)
    assert resident.patches > 0 and resident.loads > 1


@pytest.mark.parametrize("edit", ["prose", "book-0-title"])
def test_an_edit_works_out_again_the_plan_of_the_chapters_it_touches_alone(
    resident: ResidentCourse, course: Path, edit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit import incremental

    worked_out: list[str] = []
    real = incremental._part

    def counting(course: Any, chapter: Any, *rest: Any) -> Any:
        worked_out.append(chapter.id)
        return real(course, chapter, *rest)

    monkeypatch.setattr(incremental, "_part", counting)
    _kept(resident, course)
    assert resident.loaded is not None
    every = set(resident.loaded.course.chapters)
    assert sorted(worked_out) == sorted(every)
    for take in range(3):  # the first takes store what the next ones find
        worked_out.clear()
        if edit == "prose":
            _prose(course, take)
        else:
            _replace(course / BOOK0, "    title: Entropy", f"    title: Entropy, take {take}")
        assert _kept(resident, course) == _fresh(course)
    chapters = resident.loaded.course.chapters
    if edit == "prose":
        touched = {
            c
            for c, ch in chapters.items()
            if any(ls.path.endswith(LESSON) for ls in ch.lessons.values())
        }
    else:
        touched = {
            c for c, ch in chapters.items() if any(a.id == "0.IT.01" for a in ch.manifest.apparatus)
        }
    assert len(touched) == 1 and len(every) > 1
    assert sorted(worked_out) == sorted(touched)
