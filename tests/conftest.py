"""Shared fixtures. `tiny_course` is the smallest valid course, built fresh in tmp_path."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from checkout_guard import untracked

if TYPE_CHECKING:
    from coursekit.exec import Job, Limits, Outcome, Runner
    from coursekit.options import Options
    from coursekit.verify.server import SympyServer

REPO = Path(__file__).resolve().parent.parent

COURSE = """\
title: Tiny
books: ["0", I]
strands:
  - {id: basics, purpose: what the words mean}
maturity:
  - id: M0
    name: Outline
"""
BOOK0 = """\
id: "0"
title: Apparatus
apparatus:
  - id: 0.LA.01
    title: Vectors
    summary: Lists of numbers.
"""
BOOK1 = """\
id: I
title: One
chapters: [I.1]
"""
CHAPTER = """\
id: I.1
title: First
thesis: Things happen.
dek: A dek.
problem: A problem.
maturity: M0
items:
  - lesson: intro
"""
LESSON = """\
---
title: Intro
strand: basics
reading_time: 3
---
Body text.
"""


def make_course(root: Path) -> Path:
    """Write the tiny course under root/course and return that folder."""
    course = root / "course"
    files = {
        "course.yaml": COURSE,
        "0/book.yaml": BOOK0,
        "I/book.yaml": BOOK1,
        "I/1-first/chapter.yaml": CHAPTER,
        "I/1-first/lessons/intro.md": LESSON,
    }
    for name, text in files.items():
        path = course / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return course


@pytest.fixture
def tiny_course(tmp_path: Path) -> Path:
    return make_course(tmp_path)


# Tests write only in temporary folders: the run must leave the checkout as it found it. Checked
# once, on the controller (not on each xdist worker), after every worker has finished.
_BEFORE = pytest.StashKey[set[str] | None]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_BEFORE] = untracked(REPO)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = untracked(REPO) if before is not None else None
    if before is None or after is None:
        return
    gained = sorted(after - before)
    if gained:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "tests wrote into the checkout (use tmp_path, a copy, or --no-cache): "
                + ", ".join(gained),
                red=True,
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow end-to-end tests first: xdist hands tests out in this order, so the long ones
    start while the short ones fill the other workers, rather than ending the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# One sympy server per test process, for the in-process checks ---------------------------------
# Each in-process `check` would start a server of its own: a fresh interpreter importing sympy,
# ~0.5 s of CPU, some sixty times a suite. A server answers each request from that request
# alone (the specs and their limits: tests/verify/test_server.py shows it gives exactly what
# `verify_documents` gives in-process), so one kept per test process gives each check the
# verdicts its own server would. Tests of the server's own life (started when first asked,
# ended with its run, never started for nothing) are marked `own_sympy_server`.
_KEPT: list[SympyServer] = []


def _kept_server() -> SympyServer:
    from coursekit.verify.server import SympyServer

    if not _KEPT or _KEPT[0].failed:  # a server that failed once is asked no more: start anew
        _KEPT[:] = [SympyServer()]
    return _KEPT[0]


@pytest.fixture(autouse=True)
def _one_sympy_server(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("own_sympy_server"):
        yield
        return
    from coursekit.commands import check as command

    def kept(options: Options) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext(_kept_server() if options.formulas else None)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(command, "_sympy_server", kept)
        yield


# One pool of program servers per test process, likewise ------------------------------------
# A check's programs run on fork servers it starts for itself: each a fresh `python -I` that
# imports numpy (~0.3 s), for a run whose jobs take a few milliseconds each. A server runs each
# job in a worker forked for that job alone, from the job's source and limits and nothing else
# (the server's environment is `child_environment()`, fixed when it starts: it is in the key),
# so a kept pool gives each check the outcomes a pool of its own would. A test of the pool's
# own life is marked `own_exec_runner`.
_POOLS: dict[tuple[object, ...], Runner] = {}
_POOL_LOCK = threading.Lock()


def _kept_run_programs(real: Callable[..., list[Outcome]]) -> Callable[..., list[Outcome]]:
    from coursekit.exec import Runner, child_environment

    def run_programs(
        jobs: Iterable[Job], limits: Limits | None = None, **how: Any
    ) -> list[Outcome]:
        # how `rules._programs` calls it: parallel, progress and runner by keyword
        runner: Runner | None = how.get("runner")
        sandbox = str(how.get("sandbox", "auto"))
        if runner is not None:
            default = runner.python == sys.executable and runner.budget_request == "auto"
            if not default or runner._servers:  # started, or not what a kept pool is
                return real(jobs, limits, **how)
            sandbox = runner.sandbox_request
            runner.close()
        key = (sandbox, os.environ.get("COURSEKIT_EXEC_DEBUG"), *child_environment().items())
        with _POOL_LOCK:  # one run at a time on a pool, as a check's own pool has
            pool = _POOLS.get(key)
            if pool is None:
                pool = _POOLS[key] = Runner(os.cpu_count(), sandbox=sandbox)
            return pool.run(list(jobs), limits, how.get("progress"))

    return run_programs


@pytest.fixture(autouse=True)
def _one_exec_pool(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("own_exec_runner"):
        yield
        return
    import coursekit.exec

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            coursekit.exec, "run_programs", _kept_run_programs(coursekit.exec.run_programs)
        )
        yield


def pytest_unconfigure(config: pytest.Config) -> None:
    for server in _KEPT:
        server.close()
    for pool in _POOLS.values():
        pool.close()
