"""Fuzzing: mutated courses never crash coursekit, never change the tree, cached = uncached.

Each case seeds a `random.Random` with (seed, case number), applies one to three mutations
(tests/fuzz/mutate.py) to a copy of the bundled course, runs coursekit in process (click's
CliRunner; a few cases through the real CLI) and requires:

- no `internal error`, no traceback, no CK000, an exit code the command documents;
- no change on disk (the course tree, byte for byte; the cache folder aside);
- a check with the cache prints exactly what a check without it prints.

The normal test run does `COURSEKIT_FUZZ_CASES` cases (default 48: under 10 s); `nox -s fuzz`
does 10,000. A failure names its seed, case and mutations; `COURSEKIT_FUZZ_ONLY=CASE` reruns one.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from click.testing import CliRunner

from coursekit.cli import main

from .mutate import Workspace, apply, choose_kinds, read_tree

REPO = Path(__file__).resolve().parents[2]
CASES = int(os.environ.get("COURSEKIT_FUZZ_CASES", "48"))
SEED = int(os.environ.get("COURSEKIT_FUZZ_SEED", "19"))
ONLY = os.environ.get("COURSEKIT_FUZZ_ONLY")
SHARDS = int(os.environ.get("COURSEKIT_FUZZ_SHARDS", "4"))  # separate tests: xdist spreads them
REPORT = os.environ.get("COURSEKIT_FUZZ_REPORT")  # a file each shard appends its figures to
CASE_SECONDS = 60  # a case that takes longer is a hang
# CK000 is a crashed rule; SARIF also describes it among the rules (`"id": "CK000"`, and
# `**CK000/internal-error**` in its help), harmlessly
FORBIDDEN = re.compile(
    r'internal error|Traceback \(most recent call last\)|(?<!"id": ")(?<!\*\*)CK000(?!/)'
)


NEW_LESSON = ["new", "lesson", "--chapter", "II.2", "--title", "Fuzz", "--strand", "basics"]


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang(f"no answer within {CASE_SECONDS} s")


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    shutil.copytree(REPO / "course", tmp_path / "course")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
    yield Workspace(tmp_path)


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    output = result.stdout_bytes.decode("utf-8", "replace") + result.stderr_bytes.decode(
        "utf-8", "replace"
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        return 99, f"{output}\nraised {type(exc).__name__}: {exc}"
    return result.exit_code, output


def _commands(rng: random.Random, course: str) -> list[tuple[list[str], tuple[int, ...]]]:
    """The commands a case runs, each with the exit codes it may give.

    Exit 2 is a usage error (a course without course.yaml is one): allowed, as long as it is not
    an internal error, which `FORBIDDEN` catches whatever the code.
    """
    draw = rng.random()
    fmt = rng.choice(["json", "json", "text", "sarif", "github"])
    if draw < 0.85:
        check = ["check", "--structural", "--format", fmt, "--course", course]
    elif draw < 0.93:
        check = ["check", "--no-exec", "-j", "1", "--format", fmt, "--course", course]
    else:  # the other commands that read the course; `fix --diff` ends in a full check: rarer
        return [
            rng.choice(
                [
                    (["owed", "--format", "json", "--course", course], (0, 1, 2)),
                    (["owed", "--format", "json", "--course", course], (0, 1, 2)),
                    ([*NEW_LESSON, "--dry-run", "--course", course], (0, 1, 2)),
                    (["fix", "--diff", "--course", course], (0, 1, 2)),
                ]
            )
        ]
    return [(check, (0, 1, 2)), ([*check, "--no-cache"], (0, 1, 2))]


def run_case(ws: Workspace, case: int) -> str | None:
    """One case; None if coursekit behaved, else what went wrong."""
    rng = random.Random(f"{SEED}:{case}")
    kinds = choose_kinds(rng, rng.choice([1, 1, 1, 2, 3]))
    mutations = [apply(rng, ws, kind) for kind in kinds]
    before = read_tree(ws.root)
    problems: list[str] = []
    outputs: list[str] = []
    course = str(ws.root / "course")
    try:
        for args, allowed in _commands(rng, course):
            code, output = _invoke(args)
            outputs.append(output)
            if code not in allowed or FORBIDDEN.search(output):
                problems.append(f"`coursekit {' '.join(args)}` exit {code}:\n{output[-1500:]}")
    except Hang as exc:
        problems.append(str(exc))
    if read_tree(ws.root) != before:
        problems.append("the tree changed on disk")
    if len(outputs) == 2 and outputs[0] != outputs[1] and not problems:
        problems.append(
            f"cached and uncached differ:\n{outputs[0][-800:]}\n---\n{outputs[1][-800:]}"
        )
    ws.restore()
    assert read_tree(ws.root) == ws.pristine, "the fuzzer failed to restore the tree"
    if not problems:
        return None
    return f"seed {SEED} case {case}: {'; '.join(mutations)}\n" + "\n".join(problems)


def _cases(shard: int) -> list[int]:
    if ONLY is not None:
        return [int(ONLY)] if int(ONLY) % SHARDS == shard else []
    return list(range(shard, CASES, SHARDS))


@pytest.mark.parametrize("shard", range(SHARDS))
def test_mutated_courses_never_crash_nor_write(workspace: Workspace, shard: int) -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    failures: list[str] = []
    cases = _cases(shard)
    try:
        for case in cases:
            signal.alarm(CASE_SECONDS)
            try:
                failure = run_case(workspace, case)
            except Exception as exc:  # the fuzzer's own bug: report it like any other failure
                failure = f"seed {SEED} case {case}: the fuzzer raised {type(exc).__name__}: {exc}"
                workspace.restore()
            signal.alarm(0)
            if failure is not None:
                failures.append(failure)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if REPORT:
        figures: dict[str, float] = {"shard": shard, "cases": len(cases), "failures": len(failures)}
        figures["internal_errors"] = sum("internal error" in f for f in failures)
        figures["seconds"] = round(time.monotonic() - started, 1)
        with open(REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(figures) + "\n")
            handle.writelines(json.dumps({"failure": f}) + "\n" for f in failures[:50])
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n\n" + "\n\n".join(
        failures[:5]
    )


@pytest.mark.parametrize("case", [7, 8])
def test_a_few_mutated_courses_through_the_real_cli(workspace: Workspace, case: int) -> None:
    rng = random.Random(f"{SEED}:cli:{case}")
    mutations = [apply(rng, workspace, k) for k in choose_kinds(rng, 2)]
    before = read_tree(workspace.root)
    outputs = []
    for extra in ([], ["--no-cache"]):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "coursekit",
                "check",
                "--structural",
                "--format",
                "json",
                *extra,
            ],
            cwd=workspace.root,
            capture_output=True,
            timeout=120,
        )
        text = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        assert proc.returncode in (0, 1), f"{mutations}: {text}"
        assert not FORBIDDEN.search(text), f"{mutations}: {text}"
        json.loads(proc.stdout)  # one JSON document, whatever the course holds
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1], mutations
    assert read_tree(workspace.root) == before, mutations


def test_the_fuzzer_reports_a_planted_crash_and_a_planted_write(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness itself can fail: a crash, a write and a stale cache are each caught."""
    from coursekit.commands import check

    real = check.run_cached

    def crashing(*args: object, **kwargs: object) -> int:
        raise RuntimeError("planted")

    monkeypatch.setattr(check, "run_cached", crashing)
    failure = run_case(workspace, 1)
    assert failure is not None and "internal error: RuntimeError: planted" in failure

    def writing(*args: object, **kwargs: object) -> int:
        (workspace.root / "course" / "planted.md").write_text("x", encoding="utf-8")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(check, "run_cached", writing)
    failure = run_case(workspace, 1)
    assert failure is not None and "the tree changed on disk" in failure
    assert not (workspace.root / "course" / "planted.md").exists()  # and put back

    calls: list[int] = []

    def stale(*args: object, **kwargs: object) -> int:
        calls.append(1)
        out = args[3]
        out.write("first\n" if len(calls) % 2 else "second\n")  # type: ignore[attr-defined]
        return 0

    monkeypatch.setattr(check, "run_cached", stale)
    failures = [run_case(workspace, case) or "" for case in range(8)]
    assert any("cached and uncached differ" in failure for failure in failures)
