"""Lessons verified across several workers at once: concurrency, limits, identical output."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from coursekit.options import Options
from coursekit.verify import MathsSpec, verify_document, verify_documents
from coursekit.verify.claims import CheckResult
from coursekit.verify.isolation import run_isolated
from helpers import generate

ROOT = Path(__file__).parents[2]


def stamped(pause: float) -> Callable[[], CheckResult]:
    """A job that reports which process ran it, and when it started and ended."""

    def job() -> CheckResult:
        start = time.time()
        time.sleep(pause)
        return CheckResult("ok", f"{os.getpid()} {start} {time.time()}")

    return job


def no_zombies() -> bool:
    """No child of ours has exited unreaped (other tests' servers may still be running)."""
    try:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is None


def test_jobs_run_at_the_same_time_in_as_many_workers_as_asked() -> None:
    ran = run_isolated([stamped(0.4) for _ in range(4)], timeout=10, workers=2)
    stamps = [tuple(float(x) for x in r.message.split()) for r, _ in ran]
    assert all(r.status == "ok" for r, _ in ran)
    pids = {int(pid) for pid, _, _ in stamps}
    assert len(pids) == 2  # two workers, each took two jobs in turn
    # The first two jobs overlap in time: each started before the other ended.
    (_, start_a, end_a), (_, start_b, end_b) = stamps[:2]
    assert start_a < end_b and start_b < end_a
    assert no_zombies()


def test_one_worker_runs_the_jobs_one_after_another() -> None:
    ran = run_isolated([stamped(0.1) for _ in range(3)], timeout=10, workers=1)
    stamps = [tuple(float(x) for x in r.message.split()) for r, _ in ran]
    assert len({pid for pid, _, _ in stamps}) == 1
    assert all(stamps[i][2] <= stamps[i + 1][1] for i in range(2))


def test_a_crash_or_an_overrun_costs_only_its_own_job_when_workers_share_the_jobs() -> None:
    def crash() -> CheckResult:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
        raise AssertionError("unreachable")

    def spin() -> CheckResult:
        while True:
            time.sleep(0.01)

    fine = stamped(0.05)
    started = time.monotonic()
    ran = run_isolated([fine, crash, spin, fine, fine, crash, fine], timeout=0.5, workers=3)
    assert time.monotonic() - started < 3
    assert [r.status for r, _ in ran] == [
        "ok",
        "crashed",
        "timeout",
        "ok",
        "ok",
        "crashed",
        "ok",
    ]
    assert ran[1][0].message == "the worker died: killed by SIGKILL"
    assert ran[2][0].message == "timed out after 0.5 s"
    assert no_zombies()


def test_the_memory_limit_holds_in_every_worker() -> None:
    def hungry() -> CheckResult:
        blocks = [bytearray(64 * 1024 * 1024) for _ in range(32)]  # 2 GB
        return CheckResult("ok", str(len(blocks)))

    ran = run_isolated([hungry, stamped(0.01), hungry], timeout=10, memory_mb=600, workers=2)
    assert [r.status for r, _ in ran] == ["crashed", "ok", "crashed"]
    assert all("out of memory" in r.message for r, _ in (ran[0], ran[2]))


def specs() -> list[MathsSpec]:
    """Documents with every kind of verdict: true, false, malformed, skipped, missing."""
    return [
        MathsSpec.build(
            formulas={"rec": "T*(d_h**2 + d_h*d_x)"},
            claims=[
                {"id": f"v{n}", "kind": "value", "expr": "rec", "value": 50 * 1024 * 512 + n}
                | {"where": {"T": 50, "d_h": 512, "d_x": 512}}
                for n in range(3)
            ],
            equations={"rec": "T(d_h^2 + d_h d_x)"},
            numbers=[("v0", "26,214,400"), ("v1", "26,214,400")],
        ),
        MathsSpec.build(formulas={"bad": "x^2"}, equations={"bad": "x^2"}),
        MathsSpec.build(
            claims=[
                {"id": "sq", "kind": "identity", "lhs": "(a+b)**2", "rhs": "a**2 + 2*a*b + b**2"},
                {"id": "no", "kind": "identity", "lhs": "(a+b)**2", "rhs": "a**2 + b**2"},
                {"id": "roots", "kind": "solve", "equation": "x**2 = 4", "for": "x"}
                | {"solutions": [2, -2]},
            ],
            quiz=[("roots", "2", "0"), ("sq", "1", "0")],
        ),
        MathsSpec.build(assume={"postive": ["T"]}, claims=[{"id": "a", "kind": "value"}]),
    ]


def test_verdicts_are_the_same_whatever_the_number_of_workers() -> None:
    serial = verify_documents(specs(), timeout=20, workers=1)
    parallel = verify_documents(specs(), timeout=20, workers=3)
    assert [[v.to_json() | {"seconds": 0} for v in doc] for doc in parallel] == [
        [v.to_json() | {"seconds": 0} for v in doc] for doc in serial
    ]
    assert serial == [verify_document(spec, timeout=20) for spec in specs()]
    statuses = {v.status for doc in serial for v in doc}
    assert {"ok", "false", "error", "skipped"} <= statuses


def _course(tmp_path: Path) -> Path:
    course: Path = generate(3, tmp_path / "c")
    # Planted: a claim's value and a number in the prose that disagree with the formulas.
    lessons = sorted(course.rglob("*.md"))
    planted = 0
    for lesson in lessons:
        text = lesson.read_text(encoding="utf-8")
        if "{claim=" in text and planted < 2:
            head, _, tail = text.partition("]{claim=")
            digits = [i for i, ch in enumerate(head) if ch.isdigit()]
            if digits:
                at = digits[-1]
                bumped = str((int(head[at]) + 1) % 10)
                lesson.write_text(head[:at] + bumped + head[at + 1 :] + "]{claim=" + tail)
                planted += 1
    assert planted == 2
    return course


@pytest.mark.slow
def test_check_output_is_identical_with_one_job_or_several(tmp_path: Path) -> None:
    course = _course(tmp_path)
    coursekit = shutil.which("coursekit", path=str(Path(sys.executable).parent)) or "coursekit"

    def run(jobs: int) -> subprocess.CompletedProcess[str]:
        more = ("--jobs", str(jobs), "--format", "json")
        return subprocess.run(
            [coursekit, "check", "--course", str(course), "--no-cache", "--no-exec", *more],
            capture_output=True,
            text=True,
            cwd=course.parent,
            timeout=120,
        )

    one, two = run(1), run(2)
    assert one.returncode == two.returncode == 1, one.stderr
    assert one.stdout == two.stdout
    assert one.stdout.count('"CK808"') == 2


@pytest.mark.parametrize("workers", [1, 2])
def test_no_job_is_lost_or_run_twice(workers: int) -> None:
    def nth(n: int) -> Callable[[], CheckResult]:
        return lambda: CheckResult("ok", str(n))

    ran = run_isolated([nth(n) for n in range(25)], timeout=10, workers=workers)
    assert [r.message for r, _ in ran] == [str(n) for n in range(25)]


def test_jobs_handed_ahead_to_a_worker_that_dies_or_overruns_run_elsewhere() -> None:
    """A worker holds a few jobs ahead of the one it runs; its end loses none of them."""

    def crash() -> CheckResult:
        os._exit(3)

    def spin() -> CheckResult:
        while True:
            time.sleep(0.01)

    def nth(n: int) -> Callable[[], CheckResult]:
        return lambda: CheckResult("ok", str(n))

    bad = {5: crash, 6: crash, 17: spin, 30: crash}
    jobs = [bad.get(n, nth(n)) for n in range(40)]
    ran = run_isolated(jobs, timeout=0.5, workers=2)
    want = {5: "crashed", 6: "crashed", 17: "timeout", 30: "crashed"}
    assert [r.status for r, _ in ran] == [want.get(n, "ok") for n in range(40)]
    assert [r.message for r, _ in ran if r.status == "ok"] == [
        str(n) for n in range(40) if n not in want
    ]
    assert no_zombies()


def test_lessons_with_the_same_maths_are_verified_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One at a time, the second found the first's verdicts in the store; at once, likewise."""
    import coursekit.verify
    from coursekit.engine import check
    from coursekit.project import find_project
    from coursekit.rules.base import MemoryStore

    course = _course(tmp_path)
    lessons = sorted(course.rglob("counting-multiplications.md"))
    assert len(lessons) == 3
    lessons[1].write_text(lessons[2].read_text())  # chapter 2 repeats chapter 3's lesson
    real = coursekit.verify.verify_documents
    asked: list[MathsSpec] = []

    def counting(specs: list[MathsSpec], *args: object, **kwargs: object) -> object:
        asked.extend(specs)
        return real(specs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(coursekit.verify, "verify_documents", counting)
    project = find_project(course, course)
    found = check(project, options=Options(exec=False, jobs=2), store=MemoryStore()).diagnostics
    fingerprints = [spec.fingerprint() for spec in asked]
    assert len(set(fingerprints)) == len(fingerprints)  # nothing verified twice
    with_maths = sum(1 for p in course.rglob("*.md") if "claims:" in p.read_text())
    assert len(asked) == with_maths - 1
    assert sorted(d.code for d in found if d.code.startswith("CK80")) == ["CK808", "CK808"]


def test_fewer_jobs_than_workers() -> None:
    ran = run_isolated([stamped(0.01)], timeout=5, workers=4)
    assert [r.status for r, _ in ran] == ["ok"]
    assert no_zombies()
