"""The cache never replays a verdict that depended on the clock (issue 12, deliverable 3).

A slow moment (a claim that overruns `sympy-seconds`), a worker killed from outside (what the
OOM killer does) or a program killed by SIGKILL must not be kept, neither as a result in the store
nor as a whole run: the next `coursekit check`, with nothing changed, checks again and passes,
and the run after that replays the pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import make_course
from coursekit.cli import main
from helpers import LESSON as GOLDEN_LESSON
from helpers import copy_golden

LESSON = """\
---
title: Intro
strand: basics
reading_time: 3
assume:
  positive: [T, d]
formulas:
  cost: T*d
claims:
  - {id: at-two, kind: value, expr: cost, where: {T: 2, d: 3}, value: 6}
---
The cost is

$$T d$$ {#eq:cost}

which at two tokens is [6]{claim=at-two}.
"""


def check(root: Path) -> tuple[int, list[str]]:
    """`coursekit check --format json` in `root`, with the cache: (exit code, codes)."""
    cwd = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["check", "--format", "json"])
    finally:
        os.chdir(cwd)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, [d["code"] for d in json.loads(result.output)["diagnostics"]]


@pytest.fixture
def lesson_project(tmp_path: Path) -> Path:
    course = make_course(tmp_path)
    (course / "I/1-first/lessons/intro.md").write_text(LESSON, encoding="utf-8")
    chapter = course / "I/1-first/chapter.yaml"
    notation = "notation:\n  - {symbol: T, meaning: tokens}\n  - {symbol: d, meaning: width}\n"
    chapter.write_text(chapter.read_text(encoding="utf-8") + notation, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coursekit]\ncourse = "course"\nsympy-seconds = 0.5\n', encoding="utf-8"
    )
    return tmp_path


@contextlib.contextmanager
def _once(replacement: Callable[..., Any]) -> Iterator[None]:
    """Make every value claim behave as `replacement` while the context is open (verified in
    this process, where the replacement is: not in the sympy server `check` would start)."""
    import contextlib

    from coursekit.commands import check as command
    from coursekit.verify import claims

    real = claims._CHECKERS["value"]
    server = command._sympy_server
    claims._CHECKERS["value"] = replacement
    command._sympy_server = lambda options: contextlib.nullcontext(None)
    try:
        yield
    finally:
        claims._CHECKERS["value"] = real
        command._sympy_server = server


def _no_more_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    import coursekit.verify

    def boom(*args: object, **kwargs: object) -> object:
        raise AssertionError("the claims were checked again: the run was not replayed")

    monkeypatch.setattr(coursekit.verify, "verify_document", boom)
    monkeypatch.setattr(coursekit.verify, "verify_documents", boom)


def _slow(*args: Any) -> Any:
    time.sleep(3)  # past sympy-seconds = 0.5: the worker is killed at the limit
    raise AssertionError("unreachable")


def _killed(*args: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    raise AssertionError("unreachable")


@pytest.mark.parametrize(("moment", "code"), [(_slow, "CK806"), (_killed, "CK813")])
def test_a_claim_that_overran_once_passes_on_the_next_run(
    lesson_project: Path,
    monkeypatch: pytest.MonkeyPatch,
    moment: Callable[..., Any],
    code: str,
) -> None:
    with _once(moment):
        assert check(lesson_project) == (1, [code])
    assert check(lesson_project) == (0, [])  # the bad moment was not kept, nothing changed
    _no_more_sympy(monkeypatch)
    assert check(lesson_project) == (0, [])  # and the pass is replayed from the warm cache


def test_a_program_killed_from_outside_is_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = copy_golden(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.coursekit]\ncourse = "course"\n')
    import coursekit.exec
    from coursekit.exec.types import Outcome, Status

    real = coursekit.exec.run_programs

    def oom_killed(jobs: list[Any], *args: Any, **kwargs: Any) -> list[Outcome]:
        message = "crashed: killed by SIGKILL (after 0.10 s of CPU)"
        return [Outcome(job.key, Status.CRASHED, message=message) for job in jobs]

    monkeypatch.setattr(coursekit.exec, "run_programs", oom_killed)
    code, codes = check(tmp_path)
    assert code == 1 and "CK906" in codes  # (and what an unconfirmed problem owes, CK7)
    monkeypatch.setattr(coursekit.exec, "run_programs", real)
    lesson = course / GOLDEN_LESSON  # an edit elsewhere: a new run, the program's key unchanged
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert check(tmp_path) == (0, [])  # the killed program's verdict was not kept

    def boom(*args: object, **kwargs: object) -> object:
        raise AssertionError("the program ran again: the run was not replayed")

    monkeypatch.setattr(coursekit.exec, "run_programs", boom)
    assert check(tmp_path) == (0, [])


def test_a_timed_out_program_is_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_golden(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.coursekit]\ncourse = "course"\n')
    import coursekit.exec
    from coursekit.exec.types import Outcome, Status

    real = coursekit.exec.run_programs

    def slow(jobs: list[Any], *args: Any, **kwargs: Any) -> list[Outcome]:
        return [Outcome(j.key, Status.TIMEOUT, message="timed out after 10 s") for j in jobs]

    monkeypatch.setattr(coursekit.exec, "run_programs", slow)
    code, codes = check(tmp_path)
    assert code == 1 and "CK902" in codes
    monkeypatch.setattr(coursekit.exec, "run_programs", real)
    assert check(tmp_path) == (0, [])  # nothing changed, and the timeout is not replayed


def test_declining_a_result_removes_what_an_earlier_run_kept(tmp_path: Path) -> None:
    from coursekit import cache

    store = cache.DiskStore(tmp_path, env={"coursekit": "1"})
    store.put("exec", "k", {"status": "ok"})
    layered = cache.Layered(store)
    assert layered.get("exec", "k") == {"status": "ok"}
    layered.decline("exec", "k", "problem I.1/p: timeout")
    assert layered.get("exec", "k") is None and store.get("exec", "k") is None
    assert store.declined == ["problem I.1/p: timeout"]
