"""A program's verdict key (rules/_programs._key) is worked out once per program a process
keeps, and again whenever what it is worked out from is another object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coursekit import memo
from coursekit.exec import Job, Limits
from coursekit.load import load_course
from coursekit.rules import _programs

BUNDLED = Path(__file__).resolve().parents[2] / "course"


@pytest.fixture(scope="module")
def target() -> _programs.Target:
    course = load_course(BUNDLED).course
    found = [t for t in _programs.targets(course.chapters.values()) if _programs._runnable(t)]
    assert found
    return found[0]


@pytest.fixture(autouse=True)
def remembering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "REMEMBERING", True)  # as the daemon and the language server do


def test_the_same_program_is_hashed_once(
    target: _programs.Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits()
    first = _programs._key(target, limits)
    hashed: list[Any] = []

    def fingerprint(self: Job, limits: Limits) -> str:
        hashed.append(self)
        return "x"

    monkeypatch.setattr(Job, "fingerprint", fingerprint)
    assert _programs._key(target, limits) == first
    assert hashed == []


def test_another_source_limits_or_solution_is_hashed_anew(target: _programs.Target) -> None:
    limits = Limits()
    first = _programs._key(target, limits)
    assert _programs._key(target, Limits(wall_s=limits.wall_s + 1)) != first
    program = target.program
    source = program.source
    assert source is not None
    try:
        program.source = source + "\n# edited\n"
        assert _programs._key(target, limits) != first
    finally:
        program.source = source
    assert _programs._key(target, limits) == first
    other = target.meta.solution.model_copy(update={"atol": 123.0})
    moved = _programs.Target(
        target.kind,
        target.id,
        target.chapter_id,
        target.manifest_path,
        target.meta.model_copy(update={"solution": other}),
        program,
    )
    assert _programs._key(moved, limits) != first
