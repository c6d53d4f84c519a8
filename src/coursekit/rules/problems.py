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

from collections.abc import Iterator

from coursekit.model.base import Location
from coursekit.rules._programs import (
    NAMESPACE,
    Target,
    Verdict,
    start_early,
    targets,
    verdicts,
)
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.outcomes import program_outcome


def _checked(ctx: Context) -> list[Target]:
    """The programs of the chapters `ctx` checks, listed once per set of chapters (the
    family's rules each walk them)."""
    return ctx.course.derive(
        (NAMESPACE, "targets", ctx.only),
        lambda: targets(ctx.chapters()),
    )


def problem_confirmed(ctx: Context, manifest_path: str) -> bool | None:
    """Whether the program behind this problem/exercise confirms its solution (None: not run)."""
    verdict = verdicts(ctx).get(manifest_path)
    return None if verdict is None else verdict.confirmed


def _findings(ctx: Context, code: str) -> Iterator[tuple[Target, Verdict]]:
    yield from _by_outcome(ctx).get(code, ())


def _by_outcome(ctx: Context) -> dict[str, list[tuple[Target, Verdict]]]:
    """Each outcome code's (target, verdict) pairs, in the targets' order, sorted out once per
    run for the rules that report them."""

    def sort_out() -> dict[str, list[tuple[Target, Verdict]]]:
        results = verdicts(ctx)
        by_code: dict[str, list[tuple[Target, Verdict]]] = {}
        for target in _checked(ctx):
            verdict = results.get(target.manifest_path)
            if verdict is None:
                continue
            code = program_outcome(verdict.status).code
            if code is not None:  # an outcome no rule of the family reports
                by_code.setdefault(code, []).append((target, verdict))
        return by_code

    return ctx.course.derive((NAMESPACE, "by outcome", ctx.only), sort_out)


def _at_program(target: Target, verdict: Verdict) -> Location:
    if verdict.line is not None:
        lines = (target.program.source or "").split("\n")
        text = lines[verdict.line - 1] if 0 < verdict.line <= len(lines) else ""
        return Location(target.program.path, verdict.line, len(text) - len(text.lstrip()) + 1)
    where: Location = target.meta.loc("program")
    return where


@rule("CK901", "program-error", per_chapter=())
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


@rule("CK902", "program-timeout", per_chapter=())
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


@rule("CK903", "program-memory", per_chapter=())
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


@rule("CK904", "program-output", per_chapter=())
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


@rule("CK905", "program-no-result", per_chapter=())
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


@rule("CK906", "program-crashed", per_chapter=())
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


@rule("CK907", "solution-mismatch", per_chapter=())
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
    for target in _checked(ctx):
        verdict = results.get(target.manifest_path)
        if verdict is not None and program_outcome(verdict.status).code == "CK907":
            yield Finding(
                target.meta.loc("solution", "value", *verdict.where),
                f"{target.name}: the published solution disagrees with its program: "
                f"{verdict.message}",
            )


@rule("CK908", "solution-not-checkable", per_chapter=())
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
    for target in _checked(ctx):
        if target.solution.value is None:
            yield Finding(
                target.meta.key_loc("solution"),
                f"{target.name} has a program but no `solution.value` for it to confirm",
            )


@rule("CK909", "solution-tolerance", per_chapter=())
def solution_tolerance(ctx: Context) -> Iterator[Finding]:
    """A published tolerance is negative, or not a finite number.

    Fails:
        solution: {value: 0.5, rtol: -1e-9}
    Passes:
        solution: {value: 0.5, rtol: 1e-9}
    """
    for target in _checked(ctx):
        for key in ("rtol", "atol"):
            value = getattr(target.solution, key)
            if not value >= 0 or value == float("inf"):
                yield Finding(
                    target.meta.loc("solution", key),
                    f"{target.name}: `{key}` must be a finite number >= 0, not {value!r}",
                )


__all__ = [
    "NAMESPACE",
    "Target",
    "Verdict",
    "problem_confirmed",
    "start_early",
    "targets",
    "verdicts",
]
