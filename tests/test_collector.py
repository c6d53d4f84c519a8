"""The collector held off through a `check` from the cache (`coursekit.collector`), and let go
of by the work that makes garbage cycles in earnest: parsing YAML, rules over many chapters."""

from __future__ import annotations

import gc
import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursekit import collector, incremental
from coursekit.commands.check import run_cached
from coursekit.load import yamlparse
from coursekit.options import Options
from coursekit.project import find_project

BUNDLED = Path(__file__).resolve().parent.parent / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/model-width.md"
OPTIONS = Options(exec=False, formulas=False)


@pytest.fixture(autouse=True)
def collecting() -> Iterator[None]:
    """Each test starts with the collector on and no hold, and leaves it so."""
    assert gc.isenabled() and not collector.holding()
    yield
    collector.release()
    gc.enable()


def test_a_hold_turns_the_collector_off_until_it_ends() -> None:
    with collector.held():
        assert not gc.isenabled() and collector.holding()
    assert gc.isenabled() and not collector.holding()


def test_a_hold_ends_early_when_released_and_does_not_turn_it_off_again() -> None:
    with collector.held():
        collector.release()
        assert gc.isenabled() and not collector.holding()
        gc.collect()  # (collections run as usual from here)
    assert gc.isenabled()


def test_a_collector_already_off_stays_off_and_is_not_turned_on() -> None:
    gc.disable()
    try:
        with collector.held():
            assert not collector.holding()
            collector.release()
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_hold_inside_a_hold_is_the_outer_one() -> None:
    with collector.held():
        with collector.held():
            assert not gc.isenabled()
        assert not gc.isenabled() and collector.holding()
    assert gc.isenabled()


def test_a_failing_block_still_ends_the_hold() -> None:
    with pytest.raises(RuntimeError), collector.held():
        raise RuntimeError("a failing run")
    assert gc.isenabled() and not collector.holding()


def test_parsing_yaml_in_earnest_lets_go_of_the_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "PARSES", 3)
    with collector.held():
        for n in range(2):
            yamlparse.parse_yaml(f"key: {n}\n", "a.yaml")
        assert not gc.isenabled()
        yamlparse.parse_yaml("key: 3\n", "a.yaml")
        assert gc.isenabled() and not collector.holding()


def test_rules_over_more_than_a_few_chapters_let_go_of_the_hold() -> None:
    with collector.held():
        collector.running_rules_on(collector.FEW_CHAPTERS)
        assert not gc.isenabled()
        collector.running_rules_on(collector.FEW_CHAPTERS + 1)
        assert gc.isenabled()


def _enabled_at_the_rules(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was on each time the per-chapter rules began."""
    seen: list[bool] = []
    real = incremental.run_per_chapter

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(incremental, "run_per_chapter", spy)
    return seen


def _check(course: Path) -> str:
    out = io.StringIO()
    run_cached(find_project(course, course), [], "json", out, False, OPTIONS)
    return out.getvalue()


def test_a_check_from_the_cache_runs_held_and_a_cold_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    monkeypatch.setattr(collector, "PARSES", 10)  # (the bundled course has ~70 documents)
    seen = _enabled_at_the_rules(monkeypatch)
    first = _check(course)
    assert seen == [True], "a first run parses every document: the collector runs"
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    edited = _check(course)
    assert seen == [True, False], "an edit's run is built from the cache: held"
    assert gc.isenabled() and not collector.holding(), "on again once the command is done"
    assert edited == first  # (a prose edit that changes no finding)
