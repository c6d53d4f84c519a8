"""The programs behind worked problems and exercises, run once per check: what runs, the
servers started early, and each program's verdict (the CK9xx rules in `problems` report them).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import threading
from collections.abc import Iterable
from functools import partial
from typing import Any

from coursekit.memo import ByIdentity
from coursekit.model.documents import Solution
from coursekit.model.tree import Chapter, Program
from coursekit.records import record
from coursekit.rules.base import Context
from coursekit.rules.facts import unsteady
from coursekit.rules.outcomes import program_outcome

NAMESPACE = "exec"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>[0-9]+)')


@record(frozen=True)
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


@record(frozen=True)
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


def targets(chapters: Iterable[Chapter]) -> list[Target]:
    """Every program the chapters hold to run: problems', and computed exercises'."""
    return [
        t
        for chapter in chapters
        for t in _CHAPTER_TARGETS.get(chapter, partial(_of_chapter, chapter))
    ]


# A chapter's targets, by its identity: a long-lived process keeps the chapters an edit did not
# touch (a chapter is complete once loaded: nothing adds to it later).
_CHAPTER_TARGETS: ByIdentity[list[Target]] = ByIdentity(100_000)


def _of_chapter(chapter: Chapter) -> list[Target]:
    found: list[Target] = []
    for problem in chapter.problems.values():
        found.append(
            Target("problem", problem.id, chapter.id, problem.path, problem.meta, problem.program)
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


@record
class _Todo:
    """Of some chapters' programs: the verdicts the store knows, and the programs still to run
    (with their store keys)."""

    chapters: list[str]
    targets: dict[str, Target]  # manifest path -> every runnable target of those chapters
    known: dict[str, Verdict]
    jobs: list[Any]  # coursekit.exec.Job
    keys: dict[str, str]
    limits: Any  # coursekit.exec.Limits


# Each chapter's verdicts, once judged in this run (the course's derived view of that name).
_JUDGED = (NAMESPACE, "judged")
_EARLY = (NAMESPACE, "early")


def verdicts(ctx: Context) -> dict[str, Verdict]:
    """Each runnable target's verdict in the chapters `ctx` checks, keyed by its manifest path.

    A chapter's programs are judged once per run, when a rule first asks for that chapter's:
    a run that re-checks one chapter runs (or looks up) that chapter's programs alone. None
    is judged when the run does not execute programs (`--no-exec`)."""
    if not ctx.options.exec:
        return {}

    def gather() -> dict[str, Verdict]:
        judged: dict[str, dict[str, Verdict]] = ctx.course.derive(_JUDGED, dict)
        missing = [chapter for chapter in ctx.chapters() if chapter.id not in judged]
        if missing:
            _judge(ctx, missing, judged)
        found: dict[str, Verdict] = {}
        for chapter in ctx.chapters():
            found.update(judged[chapter.id])
        return found

    # once per set of chapters: the owed rules ask for every problem's verdict
    return ctx.course.derive((NAMESPACE, "verdicts", ctx.only), gather)


def _sort_out(ctx: Context, chapters: list[Chapter]) -> _Todo:
    from coursekit.exec import Limits

    config = ctx.config.limits
    limits = Limits(
        wall_s=float(config.exec_seconds),
        cpu_s=float(config.exec_seconds),
        memory_mb=int(config.exec_memory_mb),
        output_kb=int(config.exec_output_kb),
    )
    todo = _Todo([c.id for c in chapters], {}, {}, [], {}, limits)
    for target in targets(chapters):
        if not _runnable(target):
            continue
        todo.targets[target.manifest_path] = target
        key = _key(target, limits)
        cached = ctx.store.get(NAMESPACE, key)
        if isinstance(cached, dict):
            todo.known[target.manifest_path] = _VERDICTS.get(
                cached, partial(Verdict.from_json, cached)
            )
        else:
            todo.jobs.append(_job(target))
            todo.keys[target.manifest_path] = key
    return todo


def _job(target: Target) -> Any:
    """The target's coursekit.exec.Job (a runnable one: its program has a source)."""
    from coursekit.exec import Job

    assert target.program.source is not None
    return Job(target.manifest_path, target.program.source, target.program.path)


# Verdicts read from the store, by the identity of the stored value (kept in memory by a
# long-lived process).
_VERDICTS: ByIdentity[Verdict] = ByIdentity(100_000)


# Keys already worked out, by the identity of the program they were worked out from: a process
# that checks again and again (the daemon, the language server) keeps the models of the
# chapters an edit did not touch, and hashing their programs again took ~0.1 s of each run at
# 1,000 chapters.
_KEYS: ByIdentity[str] = ByIdentity(100_000)


def _key(target: Target, limits: Any) -> str:
    """The store key of a target's verdict: its program, its limits, the published solution."""
    program, solution = target.program, target.solution

    def compute() -> str:
        published = json.dumps(
            [solution.value, solution.rtol, solution.atol], sort_keys=True, default=str
        )
        return f"{_job(target).fingerprint(limits)}:{published}"

    return _KEYS.get(program, compute, program.source, program.path, solution, limits)


def _parallel(ctx: Context, jobs: int) -> int:
    return max(1, min(ctx.options.jobs or os.cpu_count() or 1, jobs))


def start_early(ctx: Context) -> None:
    """Run the programs of the chapters `ctx` checks now and later in the run (`ahead`), in the
    background, if programs will run in this check.

    A server takes a few hundred milliseconds to start (a fresh interpreter importing numpy),
    and the programs then take their own time: called before other long work (the sympy
    checks, during which this process only waits), both overlap that work instead of
    following it. Nothing starts when every program's verdict is in the store, nor twice.
    """
    if not ctx.options.exec or not _selected(ctx) or _EARLY in ctx.course.derived:
        return
    judged: dict[str, dict[str, Verdict]] = ctx.course.derive(_JUDGED, dict)
    todo = _sort_out(ctx, [c for c in ctx.chapters(ahead=True) if c.id not in judged])
    if todo.jobs:
        ctx.course.derive(_EARLY, lambda: _Early(ctx, todo))


def _selected(ctx: Context) -> bool:
    from coursekit.rules.base import REGISTRY

    return any(
        code.startswith("CK9") and ctx.config.selects(code, r.name) for code, r in REGISTRY.items()
    )


class _Early:
    """The programs of a run, run in a thread of their own from the moment they are known;
    `outcomes()` waits for them. The store is only written by the caller, after the wait.

    A failure there (no server could start) is not reported from the thread: the programs
    are run again where they are asked for, and that run reports it."""

    def __init__(self, ctx: Context, todo: _Todo) -> None:
        from coursekit.exec import Runner

        self.todo = todo

        # One server while the sympy work runs (its workers have the other cores), all of them
        # once the programs are waited for: two servers beside two sympy workers on two cores
        # slowed the sympy work by as much as the programs' whole cost.
        self._runner = Runner(_parallel(ctx, len(todo.jobs)), narrow=True)
        self._outcomes: list[Any] | None = None
        self._thread = threading.Thread(
            target=self._work, args=(ctx, todo), name="coursekit-exec", daemon=True
        )
        self._thread.start()
        atexit.register(self._runner.close)  # should no rule ask for the programs after all

    def _work(self, ctx: Context, todo: _Todo) -> None:
        with contextlib.suppress(Exception):
            self._outcomes = _run_programs(ctx, todo, self._runner)

    def outcomes(self) -> list[Any] | None:
        """Every job's outcome, in order, or None when the background run failed."""
        self._runner.widen()
        self._thread.join()
        self._runner.close()  # already closed, unless run_programs was replaced (tests)
        atexit.unregister(self._runner.close)
        return self._outcomes


def _run_programs(ctx: Context, todo: _Todo, runner: Any = None) -> list[Any]:
    """The outcomes of the programs still to run, on `runner` if given (then closed)."""
    import coursekit.exec  # looked up when called: tests replace run_programs

    progress = ctx.options.progress
    return coursekit.exec.run_programs(
        todo.jobs,
        todo.limits,
        parallel=_parallel(ctx, len(todo.jobs)),
        progress=progress if callable(progress) else None,
        runner=runner,
    )


def _judge(ctx: Context, chapters: list[Chapter], judged: dict[str, dict[str, Verdict]]) -> None:
    """Judge the chapters' programs into `judged`: the background run's first, if one was
    started, then what is still missing."""
    early = ctx.course.derived.pop(_EARLY, None)
    if isinstance(early, _Early):
        _record(ctx, early.todo, early.outcomes(), judged)
    missing = [chapter for chapter in chapters if chapter.id not in judged]
    if missing:
        _record(ctx, _sort_out(ctx, missing), None, judged)


def _record(
    ctx: Context, todo: _Todo, outcomes: list[Any] | None, judged: dict[str, dict[str, Verdict]]
) -> None:
    """The todo's verdicts, by chapter, into `judged` (its programs run now unless `outcomes`
    holds theirs); what may be kept goes into the store."""
    from coursekit.exec import sandbox_note

    result = dict(todo.known)
    if todo.jobs:
        if outcomes is None:
            outcomes = _run_programs(ctx, todo)
        notes = ctx.options.notes
        if notes is not None and (note := sandbox_note(outcomes)):
            notes.append(note)
        for outcome in outcomes:
            target = todo.targets[outcome.key]
            verdict = _verdict(target, outcome)
            result[target.manifest_path] = verdict
            key = todo.keys[target.manifest_path]
            # The table says what may be kept: timeouts and crashes (a killed worker, and every
            # runner failure, which the runner reports as crashed) are not facts about the
            # program, nor what its chapter's rules find from them.
            if program_outcome(verdict.status).kept:
                ctx.store.put(NAMESPACE, key, verdict.to_json())
            else:
                ctx.store.decline(NAMESPACE, key, f"{target.name}: {verdict.status}")
                unsteady(ctx.course, target.chapter_id)
    for chapter_id in todo.chapters:
        judged[chapter_id] = {}
    for path, verdict in result.items():
        judged[todo.targets[path].chapter_id][path] = verdict


def _verdict(target: Target, outcome: Any) -> Verdict:
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
