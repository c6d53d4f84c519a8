"""Worked problems and exercises (CK9xx): every program runs, and confirms what is published.

Each program (a problem's, or an exercise's whose answer is computed) runs once per check in the
sandboxed runner (`coursekit.exec`: its own process, a fresh temporary directory, limits on
time, memory, processes and output), all of them in parallel. What `solve()` returns is compared
with the published `solution` (`value`, `rtol`, `atol`): exact for integers and strings, within
tolerance for floats and arrays. Verdicts are kept in the result store (namespace `exec`), keyed
by the program's text, the solution, the limits, and the Python and numpy that ran it, so an
unchanged problem is not run twice. Which rule reports which outcome, and which outcomes are
never kept (timeouts and killed workers: a slow or crowded machine is not a fact), is decided by
the one table in `coursekit.rules.outcomes`.

A missing program file is CK109 (the loader); a `supports` number that names no proposition is
CK404. `coursekit check --no-exec` skips this family.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coursekit.model.base import Location
from coursekit.model.documents import Solution
from coursekit.model.tree import Course, Program
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.outcomes import program_outcome

NAMESPACE = "exec"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>[0-9]+)')


@dataclass(frozen=True)
class Target:
    """One program to run and the published solution it must reproduce."""

    kind: str  # "problem" | "exercise"
    id: str
    chapter_id: str
    manifest_path: str
    meta: Any  # WorkedProblem | Exercise
    program: Program

    @property
    def name(self) -> str:
        return f"{self.kind} {self.chapter_id}/{self.id}"

    @property
    def solution(self) -> Solution:
        solution: Solution = self.meta.solution
        return solution


@dataclass(frozen=True)
class Verdict:
    """What came of running one target: `status` is an Outcome status or "mismatch"."""

    status: str
    message: str
    line: int | None = None  # a line of the program to point at (from a traceback)
    where: tuple[str | int, ...] = ()  # keys/indices into the solution of a disagreement

    @property
    def confirmed(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "line": self.line,
            "where": list(self.where),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        line = data.get("line")
        where = data.get("where")
        return cls(
            str(data["status"]),
            str(data["message"]),
            line if isinstance(line, int) else None,
            tuple(k for k in where if isinstance(k, str | int)) if isinstance(where, list) else (),
        )


def targets(course: Course) -> list[Target]:
    """Every program there is to run: problems', and computed exercises'."""
    found: list[Target] = []
    for chapter in course.chapters.values():
        for problem in chapter.problems.values():
            found.append(
                Target(
                    "problem", problem.id, chapter.id, problem.path, problem.meta, problem.program
                )
            )
        for exercise in chapter.exercises.values():
            if exercise.program is not None:
                found.append(
                    Target(
                        "exercise",
                        exercise.id,
                        chapter.id,
                        exercise.path,
                        exercise.meta,
                        exercise.program,
                    )
                )
    return found


def _runnable(target: Target) -> bool:
    """A program that exists, and a numeric/structured solution to compare with."""
    return target.program.source is not None and target.solution.value is not None


def verdicts(ctx: Context) -> dict[str, Verdict]:
    """Each runnable target's verdict (keyed by its manifest path), computed once per run."""
    if not ctx.options.exec:
        return {}
    return ctx.course.derive(NAMESPACE, lambda: _run(ctx))


def problem_confirmed(ctx: Context, manifest_path: str) -> bool | None:
    """Whether the program behind this problem/exercise confirms its solution (None: not run)."""
    verdict = verdicts(ctx).get(manifest_path)
    return None if verdict is None else verdict.confirmed


@dataclass
class _Todo:
    """The verdicts the store knows, and the programs still to run (with their store keys)."""

    known: dict[str, Verdict]
    jobs: list[Any]  # coursekit.exec.Job
    keys: dict[str, str]
    limits: Any  # coursekit.exec.Limits


def _todo(ctx: Context) -> _Todo:
    """Computed once per run: by `start_early` when it is called, else by the first rule."""
    return ctx.course.derive((NAMESPACE, "todo"), lambda: _sort_out(ctx))


def _sort_out(ctx: Context) -> _Todo:
    from coursekit.exec import Job, Limits

    config = ctx.config.limits
    limits = Limits(
        wall_s=float(config.exec_seconds),
        cpu_s=float(config.exec_seconds),
        memory_mb=int(config.exec_memory_mb),
        output_kb=int(config.exec_output_kb),
    )
    todo = _Todo({}, [], {}, limits)
    for target in targets(ctx.course):
        if not _runnable(target):
            continue
        assert target.program.source is not None
        job = Job(target.manifest_path, target.program.source, target.program.path)
        solution = target.solution
        published = json.dumps(
            [solution.value, solution.rtol, solution.atol], sort_keys=True, default=str
        )
        key = f"{job.fingerprint(limits)}:{published}"
        cached = ctx.store.get(NAMESPACE, key)
        if isinstance(cached, dict):
            todo.known[target.manifest_path] = Verdict.from_json(cached)
        else:
            todo.jobs.append(job)
            todo.keys[target.manifest_path] = key
    return todo


def _parallel(ctx: Context, jobs: int) -> int:
    return max(1, min(ctx.options.jobs or os.cpu_count() or 1, jobs))


def start_early(ctx: Context) -> None:
    """Start the program servers now, in the background, if programs will run in this check.

    A server takes a few hundred milliseconds to start (a fresh interpreter importing numpy):
    called before other long work (the sympy checks), that start-up overlaps it instead of
    following it. Nothing starts when every program's verdict is in the store.
    """
    if not ctx.options.exec or not _selected(ctx):
        return
    todo = _todo(ctx)
    if todo.jobs:
        ctx.course.derive((NAMESPACE, "runner"), lambda: _starting(_parallel(ctx, len(todo.jobs))))


def _selected(ctx: Context) -> bool:
    from coursekit.rules.base import REGISTRY

    return any(
        code.startswith("CK9") and ctx.config.selects(code, r.name) for code, r in REGISTRY.items()
    )


def _starting(parallel: int) -> Any:
    """A runner whose servers start in a thread; `Runner.run` waits for them (its lock)."""
    from coursekit.exec import Runner, RunnerError

    runner = Runner(parallel)

    def start() -> None:
        # A server that cannot start is reported where the programs run: run() starts again.
        with contextlib.suppress(RunnerError, OSError):
            runner.start()

    threading.Thread(target=start, name="coursekit-exec-start", daemon=True).start()
    atexit.register(runner.close)  # should no rule ask for the programs after all
    return runner


def _run(ctx: Context) -> dict[str, Verdict]:
    from coursekit.exec import Runner, run_programs, sandbox_note

    todo = _todo(ctx)
    result = dict(todo.known)
    if not todo.jobs:
        return result
    early = ctx.course.derived.pop((NAMESPACE, "runner"), None)
    progress = ctx.options.progress
    try:
        outcomes = run_programs(
            todo.jobs,
            todo.limits,
            parallel=_parallel(ctx, len(todo.jobs)),
            progress=progress if callable(progress) else None,
            runner=early if isinstance(early, Runner) else None,
        )
    finally:
        if isinstance(early, Runner):
            early.close()  # already closed, unless run_programs was replaced (tests)
            atexit.unregister(early.close)
    notes = ctx.options.notes
    if notes is not None and (note := sandbox_note(outcomes)):
        notes.append(note)
    by_path = {t.manifest_path: t for t in targets(ctx.course)}
    for outcome in outcomes:
        target = by_path[outcome.key]
        verdict = _judge(target, outcome)
        result[target.manifest_path] = verdict
        key = todo.keys[target.manifest_path]
        # The table says what may be kept: timeouts and crashes (a killed worker, and every
        # runner failure, which the runner reports as crashed) are not facts about the program.
        if program_outcome(verdict.status).kept:
            ctx.store.put(NAMESPACE, key, verdict.to_json())
        else:
            ctx.store.decline(NAMESPACE, key, f"{target.name}: {verdict.status}")
    return result


def _judge(target: Target, outcome: Any) -> Verdict:
    from coursekit.exec import compare

    status = str(outcome.status)
    if status != "ok":
        return Verdict(status, _one_line(outcome.message), _program_line(outcome.traceback, target))
    solution = target.solution
    verdict = compare(solution.value, outcome.value, rtol=solution.rtol, atol=solution.atol)
    if verdict.ok:
        return Verdict("ok", "")
    where = tuple(k for k in verdict.where if isinstance(k, str | int))
    return Verdict("mismatch", verdict.message, where=where)


def _one_line(message: str) -> str:
    return message.split("\n", 1)[0]


def _program_line(traceback: str, target: Target) -> int | None:
    """The last line of the program a traceback passes through."""
    lines = [
        int(m.group("line"))
        for m in _FRAME.finditer(traceback)
        if m.group("file") == target.program.path
    ]
    return lines[-1] if lines else None


def _findings(ctx: Context, code: str) -> Iterator[tuple[Target, Verdict]]:
    results = verdicts(ctx)
    for target in targets(ctx.course):
        verdict = results.get(target.manifest_path)
        if verdict is not None and program_outcome(verdict.status).code == code:
            yield target, verdict


def _at_program(target: Target, verdict: Verdict) -> Location:
    if verdict.line is not None:
        lines = (target.program.source or "").split("\n")
        text = lines[verdict.line - 1] if 0 < verdict.line <= len(lines) else ""
        return Location(target.program.path, verdict.line, len(text) - len(text.lstrip()) + 1)
    where: Location = target.meta.loc("program")
    return where


@rule("CK901", "program-error")
def program_error(ctx: Context) -> Iterator[Finding]:
    """A worked problem's (or exercise's) program raised an exception, or does not compile.

    Reported at the program line the traceback last passes through, with the exception.

    Fails:
        def solve():
            return 1 / 0
    Passes:
        def solve():
            return 50 * 512**2
    """
    for target, verdict in _findings(ctx, "CK901"):
        yield Finding(_at_program(target, verdict), f"{target.name}: the program {verdict.message}")


@rule("CK902", "program-timeout")
def program_timeout(ctx: Context) -> Iterator[Finding]:
    """A program ran past its time limit (wall clock or CPU; `exec-seconds`, default 10).

    Fails:
        def solve():
            while True:
                pass
    Passes:
        def solve():
            return sum(range(10**6))
    """
    for target, verdict in _findings(ctx, "CK902"):
        yield Finding(_at_program(target, verdict), f"{target.name}: {verdict.message}")


@rule("CK903", "program-memory")
def program_memory(ctx: Context) -> Iterator[Finding]:
    """A program ran out of its memory (address space; `exec-memory-mb`, default 1024).

    Fails:
        def solve():
            return np.ones(50 * 2**30 // 8).sum()      # 50 GB
    Passes:
        def solve():
            return np.ones((300, 300)).sum()
    """
    for target, verdict in _findings(ctx, "CK903"):
        yield Finding(_at_program(target, verdict), f"{target.name}: {verdict.message}")


@rule("CK904", "program-output")
def program_output(ctx: Context) -> Iterator[Finding]:
    """A program printed more than its output limit (`exec-output-kb`, default 1024), or
    returned a value too large to send back.

    Fails:
        def solve():
            for _ in range(10**7):
                print("step")
    Passes:
        def solve():
            return 4
    """
    for target, verdict in _findings(ctx, "CK904"):
        yield Finding(_at_program(target, verdict), f"{target.name}: {verdict.message}")


@rule("CK905", "program-no-result")
def program_no_result(ctx: Context) -> Iterator[Finding]:
    """A program ended without a result: it has no `solve()`, it exited (`sys.exit`,
    `os._exit`) before `solve()` returned, or `solve()` returned something that is not data
    (data: numbers, strings, booleans, None, tuples, lists, dicts, numpy arrays).

    Fails:
        import sys
        sys.exit(3)
    Passes:
        def solve():
            return (512, 512.0)
    """
    for target, verdict in _findings(ctx, "CK905"):
        yield Finding(_at_program(target, verdict), f"{target.name}: {verdict.message}")


@rule("CK906", "program-crashed")
def program_crashed(ctx: Context) -> Iterator[Finding]:
    """A program's process died of a signal (a segmentation fault, an abort), or the runner
    could not run it.

    Fails:
        import ctypes
        def solve():
            return ctypes.string_at(0)
    Passes:
        def solve():
            return 0
    """
    for target, verdict in _findings(ctx, "CK906"):
        yield Finding(_at_program(target, verdict), f"{target.name}: {verdict.message}")


@rule("CK907", "solution-mismatch")
def solution_mismatch(ctx: Context) -> Iterator[Finding]:
    """The program's result disagrees with the published solution (both are shown).

    Integers and strings must match exactly; floats and arrays within `rtol`/`atol`
    (`|got - expected| <= atol + rtol * |expected|`); arrays are compared by shape first.

    Fails:
        solution: {value: 26214401}        # solve() returns 50 * 512**2 * 2 = 26214400
    Passes:
        solution: {value: 26214400}
    """
    results = verdicts(ctx)
    for target in targets(ctx.course):
        verdict = results.get(target.manifest_path)
        if verdict is not None and program_outcome(verdict.status).code == "CK907":
            yield Finding(
                target.meta.loc("solution", "value", *verdict.where),
                f"{target.name}: the published solution disagrees with its program: "
                f"{verdict.message}",
            )


@rule("CK908", "solution-not-checkable")
def solution_not_checkable(ctx: Context) -> Iterator[Finding]:
    """A worked problem, or an exercise with a program, publishes no `solution.value` for the
    program to confirm (a worded `text:` answer alone cannot be checked).

    Fails:
        program: solution.py
        solution: {text: About twenty-six million.}
    Passes:
        program: solution.py
        solution: {value: 26214400}
    """
    for target in targets(ctx.course):
        if target.solution.value is None:
            yield Finding(
                target.meta.key_loc("solution"),
                f"{target.name} has a program but no `solution.value` for it to confirm",
            )


@rule("CK909", "solution-tolerance")
def solution_tolerance(ctx: Context) -> Iterator[Finding]:
    """A published tolerance is negative, or not a finite number.

    Fails:
        solution: {value: 0.5, rtol: -1e-9}
    Passes:
        solution: {value: 0.5, rtol: 1e-9}
    """
    for target in targets(ctx.course):
        for key in ("rtol", "atol"):
            value = getattr(target.solution, key)
            if not value >= 0 or value == float("inf"):
                yield Finding(
                    target.meta.loc("solution", key),
                    f"{target.name}: `{key}` must be a finite number >= 0, not {value!r}",
                )
