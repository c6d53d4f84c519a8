"""CK9xx: problem programs run (sandboxed) and must confirm their published solutions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coursekit.diagnostics import Diagnostic
from coursekit.engine import check
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.rules import problems
from coursekit.rules.base import MemoryStore
from helpers import PROBLEM, copy_golden, edit, line_of, run_check

PROGRAM = PROBLEM.replace("problem.yaml", "solution.py")
EXEC = Options(exec=True, jobs=2)


def exec_check(course: Path) -> list[Diagnostic]:
    return run_check(course, options={"exec": True, "jobs": 2})


def ck9(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.code.startswith("CK9")]


def only(diagnostics: list[Diagnostic], code: str) -> Diagnostic:
    found = ck9(diagnostics)
    assert [d.code for d in found] == [code], found
    return found[0]


def write_program(course: Path, source: str) -> None:
    (course / PROGRAM).write_text(source, encoding="utf-8")


def limit_seconds(course: Path, seconds: int) -> None:
    (course.parent / "pyproject.toml").write_text(
        f"[tool.coursekit]\nexec-seconds = {seconds}\n", encoding="utf-8"
    )


def test_golden_course_confirms_its_problem(tmp_path: Path) -> None:
    assert ck9(exec_check(copy_golden(tmp_path))) == []


def test_mismatch_shows_both_values_and_restoring_passes(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  value: 5")
    found = only(exec_check(course), "CK907")
    assert found.path == f"course/{PROBLEM}"
    assert found.line == line_of(course / PROBLEM, "value: 5")
    assert "expected 5, got 4" in found.message
    edit(course / PROBLEM, "  value: 5", "  value: 4")
    assert ck9(exec_check(course)) == []


def test_float_tolerance(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    write_program(
        course, "import numpy as np\n\ndef solve():\n    return float(np.mean([1, 2]) / 3)\n"
    )
    edit(course / PROBLEM, "  value: 4", "  value: 0.5\n  rtol: 1.0e-9")
    assert ck9(exec_check(course)) == []
    edit(course / PROBLEM, "  value: 0.5\n", "  value: 0.5000001\n")
    found = only(exec_check(course), "CK907")
    assert "expected 0.5000001, got 0.5" in found.message


def test_exception_points_at_the_program_line(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    write_program(
        course, "def helper():\n    return 1 / 0\n\n\ndef solve():\n    return helper()\n"
    )
    found = only(exec_check(course), "CK901")
    assert (found.path, found.line, found.column) == (f"course/{PROGRAM}", 2, 5)
    assert "ZeroDivisionError: division by zero" in found.message


@pytest.mark.parametrize(
    ("code", "source", "words"),
    [
        ("CK902", "import time\n\ndef solve():\n    time.sleep(30)\n", "wall-clock"),
        ("CK903", "def solve():\n    return bytearray(50 * 2**30)\n", "memory"),
        ("CK904", "def solve():\n    while True:\n        print('x' * 4096)\n", "output limit"),
        ("CK905", "import sys\nsys.exit(3)\n", "sys.exit(3)"),
        ("CK905", "import os\n\ndef solve():\n    os._exit(0)\n", "exited with status 0"),
        ("CK905", "def solve():\n    return {1, 2}\n", "set"),
        ("CK906", "import ctypes\n\ndef solve():\n    return ctypes.string_at(0)\n", "SIGSEGV"),
    ],
    ids=["timeout", "memory", "output", "sys-exit", "os-exit", "not-data", "segfault"],
)
def test_hostile_programs_are_diagnostics(
    tmp_path: Path, code: str, source: str, words: str
) -> None:
    course = copy_golden(tmp_path)
    limit_seconds(course, 1)
    write_program(course, source)
    before = sorted(p.read_bytes() for p in course.rglob("*") if p.is_file())
    found = only(exec_check(course), code)
    assert words in found.message
    assert found.path in (f"course/{PROBLEM}", f"course/{PROGRAM}")
    assert sorted(p.read_bytes() for p in course.rglob("*") if p.is_file()) == before


def test_problem_needs_a_checkable_solution(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  text: Four positions.")
    found = only(exec_check(course), "CK908")
    assert found.line == line_of(course / PROBLEM, "solution:")


def test_negative_tolerance(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  value: 4\n  rtol: -0.1")
    found = only(exec_check(course), "CK909")
    assert found.line == line_of(course / PROBLEM, "rtol: -0.1")


def test_no_exec_runs_nothing(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  value: 5")
    assert ck9(run_check(course, options={"exec": False})) == []


def test_verdicts_are_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  value: 5")
    project = find_project(course, course)
    store = MemoryStore()
    runs: list[int] = []
    import coursekit.exec

    real = coursekit.exec.run_programs

    def counting(jobs: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(len(jobs))
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(coursekit.exec, "run_programs", counting)
    first = check(project, options=EXEC, store=store).diagnostics
    second = check(project, options=EXEC, store=store).diagnostics
    assert runs == [1]
    assert ck9(first) == ck9(second) and [d.code for d in ck9(first)] == ["CK907"]
    write_program(course, "def solve():\n    return 5\n")  # a changed program runs again
    assert ck9(check(project, options=EXEC, store=store).diagnostics) == []
    assert runs == [1, 1]


def test_problem_confirmed_hook(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / PROBLEM, "  value: 4", "  value: 5")
    project = find_project(course, course)
    from coursekit.load import load_course
    from coursekit.rules.base import Context

    loaded = load_course(project.course_dir, project.root, None)
    ctx = Context(course=loaded.course, config=project.config, options=EXEC)
    assert problems.problem_confirmed(ctx, f"course/{PROBLEM}") is False


def test_mismatch_in_a_mapping_points_at_its_entry(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    write_program(course, "def solve():\n    return {'chain': 50, 'grid': 3}\n")
    edit(course / PROBLEM, "  value: 4", "  value:\n    chain: 50\n    grid: 4")
    found = only(exec_check(course), "CK907")
    assert found.line == line_of(course / PROBLEM, "grid: 4")
    assert "at ['grid']: expected 4, got 3" in found.message


def test_verdicts_are_gathered_once_per_set_of_chapters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the owed rules ask for each problem's verdict; gathering every chapter's
    verdicts anew for each ask made a course of published chapters quadratic."""
    from dataclasses import replace

    from coursekit.load import load_course
    from coursekit.rules import _programs
    from coursekit.rules.base import Context

    project = find_project(copy_golden(tmp_path), tmp_path / "course")
    loaded = load_course(project.course_dir, project.root, None)
    ctx = Context(loaded.course, project.config, MemoryStore(), EXEC)
    judged: list[list[str]] = []
    real = _programs._judge

    def counting(ctx_: Any, chapters: Any, into: Any) -> None:
        judged.append([c.id for c in chapters])
        real(ctx_, chapters, into)

    monkeypatch.setattr(_programs, "_judge", counting)
    every = problems.verdicts(ctx)
    assert every and problems.verdicts(ctx) is every  # gathered once
    chapter = next(iter(loaded.course.chapters))
    alone = problems.verdicts(replace(ctx, only=frozenset({chapter})))
    assert alone.items() <= every.items()
    assert judged == [list(loaded.course.chapters)]  # each chapter's programs judged once
