"""Every outcome has a diagnostic: the table in coursekit.rules.outcomes, walked pair by pair.

The pairs come from the verifier's and the runner's own enumerations (the `Subject`/`Status`
literals of coursekit.verify.status, the `Status` enum of coursekit.exec.types), so a status
added there without a row here fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coursekit.config import Config
from coursekit.diagnostics import Severity
from coursekit.exec.types import Status as ProgramStatus
from coursekit.load import load_course
from coursekit.options import Options
from coursekit.rules import REGISTRY, formulas, problems
from coursekit.rules.base import Context, Finding
from coursekit.rules.outcomes import MATHS, PROGRAMS, kept, maths_outcome, program_outcome, table
from coursekit.verify.runner import Verdict
from coursekit.verify.status import STATUSES, SUBJECTS, Status, Subject
from helpers import PROBLEM, copy_golden

MATHS_PAIRS = [(subject, status) for subject in SUBJECTS for status in STATUSES]
PROGRAM_STATUSES = [str(s) for s in ProgramStatus] + ["mismatch"]
FAMILY_CODES = {
    "formulas": sorted(c for c in REGISTRY if c.startswith("CK8")),
    "problems": sorted(c for c in REGISTRY if c.startswith("CK9")),
}

LESSON = """\
---
title: Intro
strand: basics
reading_time: 3
formulas:
  f: T*d
claims:
  - {id: c, kind: value, expr: f, where: {T: 2, d: 3}, value: 6}
quiz:
  - {kind: numeric, prompt: How much, answer: 6, margin: 0, claim: c}
---
The cost is

$$T d$$ {#eq:f}

so it is [6]{claim=c}.
"""


def test_the_verifier_enumerates_what_it_returns() -> None:
    assert set(SUBJECTS) == {"spec", "formula", "shape", "claim", "equation", "number", "quiz"}
    assert {"ok", "false", "unproven", "error", "timeout", "crashed", "missing", "skipped"} <= set(
        STATUSES
    )


@pytest.mark.parametrize(("subject", "status"), MATHS_PAIRS)
def test_every_maths_pair_has_a_row(subject: str, status: str) -> None:
    assert (subject, status) in MATHS, f"({subject}, {status}) has no diagnostic"
    row = MATHS[(subject, status)]
    if status in ("ok", "skipped"):
        assert row.code is None  # ok passes; skipped is reported through what it depends on
    else:
        assert row.code in REGISTRY and row.severity == REGISTRY[row.code].severity


@pytest.mark.parametrize("status", PROGRAM_STATUSES)
def test_every_program_status_has_a_row(status: str) -> None:
    assert status in PROGRAMS, f"program status {status!r} has no diagnostic"
    row = PROGRAMS[status]
    if status == "ok":
        assert row.code is None
    else:
        assert row.code in REGISTRY and row.severity == REGISTRY[row.code].severity


def _rule_findings(ctx: Context, family: str) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for code in FAMILY_CODES[family]:
        check = REGISTRY[code].check
        if check is not None:
            out[code] = list(check(ctx))
    return {code: found for code, found in out.items() if found}


@pytest.fixture(scope="module")
def maths_ctx(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import make_course

    course = make_course(tmp_path_factory.mktemp("outcomes"))
    (course / "I/1-first/lessons/intro.md").write_text(LESSON, encoding="utf-8")
    loaded = load_course(course, course.parent)
    ctx = Context(course=loaded.course, config=Config(), options=Options(formulas=False))
    lesson = loaded.course.chapters["I.1"].lessons["intro"]
    equations, numbers = formulas.scan_body(lesson.body)
    assert len(equations) == 1 and len(numbers) == 1
    return ctx, lesson, equations, numbers


@pytest.mark.parametrize(("subject", "status"), MATHS_PAIRS)
def test_each_maths_pair_is_reported_by_its_rule_alone(
    maths_ctx: Any, monkeypatch: pytest.MonkeyPatch, subject: Subject, status: Status
) -> None:
    ctx, lesson, equations, numbers = maths_ctx
    key = {"formula": "f", "shape": "f", "equation": "f", "spec": "assume"}.get(subject, "c")
    verdict = Verdict(subject, key, 0, status, "what happened")
    maths = formulas.LessonMaths(lesson, equations, numbers, [(0, "c")], [verdict])
    monkeypatch.setattr(formulas, "lesson_maths", lambda _ctx: [maths])
    found = _rule_findings(ctx, "formulas")
    found.pop("CK810", None)  # "formula never shown" reads the equations, not the verdicts
    row = maths_outcome(subject, status)
    if row.code is None:
        assert found == {}, f"({subject}, {status}) should pass silently, got {found}"
        return
    assert list(found) == [row.code], f"({subject}, {status}) -> {list(found)}, want {row.code}"
    (finding,) = found[row.code]
    assert finding.location.path == lesson.path and finding.location.line >= 1
    assert REGISTRY[row.code].severity == row.severity


@pytest.mark.parametrize("status", PROGRAM_STATUSES)
def test_each_program_status_is_reported_by_its_rule_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: str
) -> None:
    course = copy_golden(tmp_path)
    loaded = load_course(course, course.parent)
    ctx = Context(course=loaded.course, config=Config(), options=Options(exec=False))
    manifest = f"{course.name}/{PROBLEM}"
    target = next(
        t for t in problems.targets(loaded.course.chapters.values()) if t.manifest_path == manifest
    )
    verdict = problems.Verdict(status, "what happened")
    monkeypatch.setattr(problems, "verdicts", lambda _ctx: {target.manifest_path: verdict})
    found = _rule_findings(ctx, "problems")
    row = program_outcome(status)
    if row.code is None:
        assert found == {}
        return
    assert list(found) == [row.code], f"{status} -> {list(found)}, want {row.code}"


def test_an_unknown_status_is_a_crash_never_a_pass() -> None:
    assert maths_outcome("claim", "something-new").code == "CK813"
    assert program_outcome("something-new").code == "CK906"


def test_clock_dependent_outcomes_are_never_kept() -> None:
    assert not kept("claim", "timeout") and not kept("equation", "crashed")
    assert kept("claim", "false") and kept("claim", "unproven")
    assert not PROGRAMS[ProgramStatus.TIMEOUT].kept and not PROGRAMS[ProgramStatus.CRASHED].kept
    assert PROGRAMS["mismatch"].kept


def test_unproven_is_an_error_that_says_what_to_add() -> None:
    row = MATHS[("claim", "unproven")]
    assert row.severity == Severity.ERROR
    assert "assume" in row.says and "where" in row.says


def test_the_table_prints_every_pair() -> None:
    rows = table()
    assert len(rows) == len(MATHS) + len(PROGRAMS)
    assert {(r[0], r[1]) for r in rows} >= set(MATHS_PAIRS)
