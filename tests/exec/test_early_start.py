"""The program servers start while the sympy work runs, once per check, and only when needed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import coursekit.verify
from coursekit.engine import check
from coursekit.exec import runner as exec_runner
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.rules.base import MemoryStore
from helpers import generate

ROOT = Path(__file__).parents[2]

# what is measured here is the life of a check's own servers
pytestmark = pytest.mark.own_exec_runner


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course: Path = generate(2, tmp_path_factory.mktemp("gen") / "c")
    assert list(course.rglob("solution.py")) and "claims:" in "".join(
        p.read_text() for p in course.rglob("*.md")
    )
    return course


class Clock:
    """When servers were asked to start, and when the sympy work began and ended."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.servers: list[float] = []
        self.sympy: list[tuple[float, float]] = []
        real_init = exec_runner._Server.__init__
        real_verify = coursekit.verify.verify_documents

        def init(server: Any, *args: Any, **kwargs: Any) -> None:
            self.servers.append(time.monotonic())
            real_init(server, *args, **kwargs)

        def verify(*args: Any, **kwargs: Any) -> Any:
            began = time.monotonic()
            try:
                return real_verify(*args, **kwargs)
            finally:
                self.sympy.append((began, time.monotonic()))

        monkeypatch.setattr(exec_runner._Server, "__init__", init)
        monkeypatch.setattr(coursekit.verify, "verify_documents", verify)


def run(course: Path, store: MemoryStore, **options: Any) -> list[Any]:
    project = find_project(course, course)
    return check(
        project, options=Options(**({"exec": True, "jobs": 2} | options)), store=store
    ).diagnostics


def test_servers_start_during_the_sympy_work_and_only_once(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(monkeypatch)
    store = MemoryStore()
    found = run(generated, store)
    assert not [d for d in found if d.code.startswith("CK9")], found
    ((began, ended),) = clock.sympy
    # One server while the sympy work runs; the second only once the programs are waited
    # for (if any is still to run then): one per job slot at most, reused for every program.
    assert 1 <= len(clock.servers) <= 2, clock.servers
    assert clock.servers[0] < ended, (clock.servers, began, ended)
    # Everything is in the store now: the next check starts neither sympy nor a server.
    clock.servers.clear()
    clock.sympy.clear()
    assert run(generated, store) == found
    assert clock.servers == [] and clock.sympy == []


def test_no_server_starts_when_programs_do_not_run(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(monkeypatch)
    run(generated, MemoryStore(), exec=False)
    assert len(clock.sympy) == 1 and clock.servers == []


def test_the_early_servers_are_closed_after_the_programs_ran(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    real_init = exec_runner._Server.__init__

    def init(server: Any, *args: Any, **kwargs: Any) -> None:
        real_init(server, *args, **kwargs)
        made.append(server)

    monkeypatch.setattr(exec_runner._Server, "__init__", init)
    run(generated, MemoryStore())
    assert 1 <= len(made) <= 2
    for server in made:
        assert server.proc.poll() is not None  # exited, and reaped
        assert not Path(server.workdirs).exists()


def test_the_programs_run_while_the_sympy_work_runs(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sympy work is held until every program has run (or 30 s passed): on a check that
    runs the programs only after the sympy work, they never do meanwhile. They run on one
    server then: the sympy work has the other core."""
    import threading

    real_execute = exec_runner._Server.execute
    real_verify = coursekit.verify.verify_documents
    ran: list[Any] = []
    all_ran = threading.Event()
    jobs = len(list(generated.rglob("solution.py")))

    def execute(server: Any, job: Any, limits: Any) -> Any:
        reply = real_execute(server, job, limits)
        ran.append(job.key)
        if len(ran) == jobs:
            all_ran.set()
        return reply

    def verify(*args: Any, **kwargs: Any) -> Any:
        held = all_ran.wait(30)
        during.append(held)
        servers.append(len(made))
        return real_verify(*args, **kwargs)

    real_init = exec_runner._Server.__init__
    made: list[Any] = []

    def init(server: Any, *args: Any, **kwargs: Any) -> None:
        made.append(server)
        real_init(server, *args, **kwargs)

    during: list[bool] = []
    servers: list[int] = []
    monkeypatch.setattr(exec_runner._Server, "__init__", init)
    monkeypatch.setattr(exec_runner._Server, "execute", execute)
    monkeypatch.setattr(coursekit.verify, "verify_documents", verify)
    found = run(generated, MemoryStore())
    assert during == [True], f"{len(ran)} of {jobs} programs ran during the sympy work"
    assert servers == [1]  # one core for the programs, the other for the sympy work
    assert not [d for d in found if d.code.startswith("CK9")], found
    assert len(ran) == jobs  # and none ran twice
