"""A course checked in batches of chapters (coursekit.incremental.BATCH): what it reports is
what one batch reports, and what the rules worked out from a batch is let go of before the
next, once the summaries the comparisons read have been worked out from it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from coursekit import incremental
from coursekit.diagnostics import Diagnostic
from coursekit.engine import check, load_context
from coursekit.model.tree import Course
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.rules import Context, _programs
from coursekit.store import MemoryStore
from helpers import SharedVerdicts

BUNDLED = Path(__file__).resolve().parent.parent / "course"
CHAPTERS = ["I.1", "I.2", "I.3", "I.4", "II.1", "II.2"]  # the bundled course's, in order
LESSON = "II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"
RULES = Options(exec=False, formulas=False)
EVERYTHING = Options(exec=True, formulas=True)


class Store(SharedVerdicts):
    """Rule results through JSON, as on disk; sympy verdicts shared across the tests."""

    def put(self, namespace: str, key: str, value: Any) -> None:
        super().put(namespace, key, json.loads(json.dumps(value)))

    def kept(self) -> dict[tuple[str, str], Any]:
        """What it keeps per chapter: rule results and summaries."""
        return {k: v for k, v in self._data.items() if k[0] in ("rules", "summaries")}


@pytest.fixture
def course(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(BUNDLED, target)
    return target


def _check(course: Path, options: Options, store: MemoryStore | None) -> list[Diagnostic]:
    return check(find_project(course, course), options=options, store=store).diagnostics


@pytest.mark.parametrize(
    ("options", "batch"),
    [(RULES, 1), (RULES, 4), (EVERYTHING, 1)],
    ids=["rules, batches of 1", "rules, batches of 4", "sympy and programs, batches of 1"],
)
def test_batches_report_what_one_batch_reports(
    course: Path, monkeypatch: pytest.MonkeyPatch, options: Options, batch: int
) -> None:
    single = Store()
    one_batch = _check(course, options, single)
    assert {d.code for d in one_batch} >= {"CK305"}  # (the course has findings to compare)
    monkeypatch.setattr(incremental, "BATCH", batch)
    assert _check(course, options, None) == one_batch  # a run that keeps nothing
    store = Store()
    assert _check(course, options, store) == one_batch  # a first run, keeping per chapter
    assert store.kept() == single.kept()  # every chapter's, as one batch keeps them
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nSee Prop. 9 of I.1.\n", "utf-8")
    edited = _check(course, options, store)
    assert any(d.path.endswith(LESSON) and "Prop. 9" in d.message for d in edited)
    monkeypatch.setattr(incremental, "BATCH", 100)
    assert edited == _check(course, options, None)


def test_a_batchs_views_are_let_go_of_after_the_comparisons_summaries(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.rules import propositions

    events: list[tuple[str, str]] = []
    summarised = propositions._supported
    let_go = Course.let_go

    def supported(course_: Course, chapter: Any) -> Any:
        assert course_.of_chapter.get(chapter.id), "summarised once its views were let go of"
        events.append(("summarised", chapter.id))
        return summarised(course_, chapter)

    def letting_go(self: Course, chapter_ids: Any) -> None:
        events.extend(("let go", c) for c in sorted(chapter_ids))
        let_go(self, chapter_ids)

    texts_let_go: list[int] = []
    monkeypatch.setattr(propositions, "_supported", supported)
    monkeypatch.setattr(Course, "let_go", letting_go)
    monkeypatch.setattr(incremental, "let_go_of_texts", lambda: texts_let_go.append(1))
    monkeypatch.setattr(incremental, "BATCH", 2)
    result = check(find_project(course, course), options=RULES, store=Store())
    pairs = [CHAPTERS[i : i + 2] for i in range(0, len(CHAPTERS), 2)]
    expected: list[tuple[str, str]] = []
    for pair in pairs[:-1]:
        expected += [("summarised", c) for c in pair] + [("let go", c) for c in pair]
    expected += [("summarised", c) for c in pairs[-1]]  # by the comparison itself, after
    assert events == expected
    assert len(texts_let_go) == len(pairs) - 1
    assert set(result.course.of_chapter) <= set(pairs[-1])  # the last batch's views alone


def test_the_programs_of_later_batches_start_with_the_first(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's first sympy work starts the programs of every batch after it (`ahead`) in the
    background, as a run of one batch does: they then overlap the sympy work."""
    started: list[list[str]] = []

    class Early:
        def __init__(self, ctx: Context, todo: Any) -> None:
            started.append(sorted({target.chapter_id for target in todo.targets.values()}))

    monkeypatch.setattr(_programs, "_Early", Early)
    _, ctx = load_context(find_project(course, course), EVERYTHING, MemoryStore())
    _programs.start_early(replace(ctx, only=frozenset({"I.1"})))
    assert started == []  # I.1 has no program
    ahead = frozenset({"II.1", "II.2"})
    _programs.start_early(replace(ctx, only=frozenset({"I.1"}), ahead=ahead))
    assert started == [["II.2"]]  # a later batch's programs, started now
