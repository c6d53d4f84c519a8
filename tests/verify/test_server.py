"""The sympy server `check` forks before the course loads: the same verdicts, a fallback that
never loses one, and a parent that never imports sympy itself."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from coursekit.options import Options
from coursekit.verify import MathsSpec, verify_documents
from coursekit.verify.server import SympyServer, _decoded

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.own_sympy_server  # the server's own life is what these test


def specs() -> list[MathsSpec]:
    """A value that holds, one that does not, an equation, a number and an error."""
    return [
        MathsSpec.build(
            assume={"positive": ["T", "d"]},
            formulas={"ratio": "T / d"},
            claims=[
                {
                    "id": "half",
                    "kind": "value",
                    "expr": "ratio",
                    "where": {"T": 1, "d": 2},
                    "value": "0.5",
                },
                {
                    "id": "wrong",
                    "kind": "value",
                    "expr": "ratio",
                    "where": {"T": 1, "d": 2},
                    "value": "2",
                },
            ],
            equations=[("ratio", r"\frac{T}{d}")],
            numbers=[("half", "0.5")],
        ),
        MathsSpec.build(
            formulas={"bad": "T +"},
            claims=[{"id": "c", "kind": "value", "expr": "bad", "value": "1"}],
        ),
    ]


def test_the_server_gives_the_verdicts_verify_documents_gives_here() -> None:
    here = verify_documents(specs(), 10, workers=2)
    with SympyServer() as server:
        there = server.verify(specs(), 10, memory_mb=None, workers=2)
        pid = server.pid
        again = verify_documents(specs(), 10, workers=2, server=server)
        assert server.answered == 2 and server.pid == pid != os.getpid()  # one server, reused
    assert there == here == again
    statuses = [v.status for v in here[0]]
    assert "ok" in statuses and "false" in statuses, here  # the spec exercises both outcomes


def test_a_server_that_is_not_asked_is_not_started() -> None:
    with SympyServer() as server:
        pass
    assert server.process is None and server.answered == 0


def test_a_server_that_died_costs_no_verdict() -> None:
    server = SympyServer()
    assert server._started()
    os.kill(server.pid, signal.SIGKILL)  # as the OOM killer would
    assert server.verify(specs(), 10, memory_mb=None, workers=1) is None
    assert server.pid == 0  # closed and reaped
    assert not server._started()  # and not started again
    # verify_documents falls back to this process, with the same verdicts as without a server
    assert verify_documents(specs(), 10, server=server) == verify_documents(specs(), 10)
    server.close()  # closing twice is harmless


def test_a_server_that_cannot_start_costs_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    server = SympyServer()
    assert verify_documents(specs(), 10, server=server) == verify_documents(specs(), 10)
    assert server.process is None
    server.close()


def test_close_ends_the_server() -> None:
    server = SympyServer()
    assert server._started()
    pid = server.pid
    server.close()
    with pytest.raises(ChildProcessError):  # already reaped by close()
        os.waitpid(pid, os.WNOHANG)


def test_a_server_never_asked_is_killed_not_left_to_finish_importing() -> None:
    """Started early for maths that kept results then answered: nothing of it is needed, and
    it forked no worker, so `close` does not wait for it to unwind an import of sympy."""
    server = SympyServer()
    server.start()
    process = server.process
    assert process is not None
    server.close()
    assert process.returncode == -signal.SIGKILL


def test_a_server_that_was_asked_unwinds_to_end_its_workers() -> None:
    server = SympyServer()
    assert server.verify(specs(), 5.0) is not None
    process = server.process
    assert process is not None
    server.close()
    assert process.returncode == 0  # SIGTERM, caught: the server ended its workers and left


@pytest.mark.parametrize(
    "reply",
    [
        None,
        b"",
        b"not json",
        b'{"error": "ValueError: x"}',
        b'{"verdicts": []}',  # one document's verdicts missing
        b'{"verdicts": [[{"subject": "claim"}], []]}',  # a verdict missing its fields
        b'{"verdicts": "no"}',
    ],
)
def test_a_reply_that_is_not_a_whole_answer_is_no_answer(reply: bytes | None) -> None:
    assert _decoded(reply, 2) is None


def test_a_whole_answer_decodes() -> None:
    verdicts = verify_documents(specs(), 10)
    reply = json.dumps({"verdicts": [[v.to_json() for v in doc] for doc in verdicts]})
    assert _decoded(reply.encode(), 2) == verdicts


def test_check_verifies_formulas_without_importing_sympy_itself(tmp_path: Path) -> None:
    """The run verifies the bundled course's claims (no cache), in the server: the process that
    loaded the course never imports sympy, so no worker of sympy's is forked from it."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "course", project / "course")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    script = textwrap.dedent(
        """
        import sys
        from coursekit.cli import main
        try:
            main(["check", "--no-cache", "--no-exec"], prog_name="coursekit")
        except SystemExit as exc:
            code = exc.code
        print("sympy" in sys.modules, code, file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert done.stderr.strip().splitlines()[-1] == "False 0", done.stderr
    assert "Found 0 errors" in done.stdout


def test_a_server_that_never_answers_cannot_hang_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past every job's own limit (and some slack), the parent gives up on the server and
    verifies in-process; closing a server that does not respond to SIGTERM still ends it."""
    from coursekit.verify import server as module

    monkeypatch.setattr(module, "SLACK_SECONDS", 0.3)

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("the parent waited on a server that answers nothing")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)  # fail, rather than hang the suite, if the deadline is ever lost
    try:
        _never_answers()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _never_answers() -> None:
    server = SympyServer()
    assert server._started()
    pid = server.pid
    os.kill(pid, signal.SIGSTOP)  # alive, holding its pipes, reading and answering nothing
    # more than a pipe holds (distinct specs: pickle writes a repeated object once), so the
    # request itself waits on the server
    many = [MathsSpec.build(formulas={"f": f"T + {i}"}) for i in range(3000)]
    assert len(pickle.dumps(many)) > 1 << 17
    started = time.monotonic()
    assert server.verify(many, 0.5, memory_mb=None, workers=1) is None
    assert time.monotonic() - started < 15
    assert server.pid == 0  # given up on, ended and reaped
    assert verify_documents(specs(), 0.2, server=server) == verify_documents(specs(), 0.2)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_the_server_verifies_exactly_the_specs_it_is_given() -> None:
    """Every lesson spec of the bundled course, and claims whose empty fields mean something
    (sent as the specs' JSON, `solutions: []` came back as no `solutions`: a claim-false became
    claim-invalid), get the same verdicts from the server as in this process."""
    from coursekit.engine import load_context
    from coursekit.project import find_project
    from coursekit.rules import _lesson_maths

    _, ctx = load_context(find_project(ROOT))
    lessons = [lesson for c in ctx.course.chapters.values() for lesson in c.lessons.values()]
    planned = [_lesson_maths._plan_lesson(ctx, lesson) for lesson in lessons]
    course_specs = [p.spec for p in planned if p is not None]
    assert len(course_specs) >= 3
    empty = MathsSpec.build(
        claims=[
            {"id": name, "kind": "solve", "equation": equation, "for": "x", "solutions": []}
            for name, equation in (("none", "x**2 + 1 = 0"), ("some", "x**2 - 1 = 0"))
        ]
    )
    solved = verify_documents([empty], 10)[0]
    assert [v.status for v in solved if v.subject == "claim"] == ["false", "false"]  # read, judged
    all_specs = [*course_specs, empty]
    with SympyServer() as server:
        there = server.verify(all_specs, 10, memory_mb=None, workers=2)
    assert there == verify_documents(all_specs, 10, workers=2)


def test_the_server_imports_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check` runs in the author's repository: a `sympy.py` there (hostile, or a stray file)
    must not be what the server imports (`python -c` puts the working directory first)."""
    marker = tmp_path / "ran"
    (tmp_path / "sympy.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('not sympy')\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    with SympyServer() as server:
        there = server.verify(specs(), 10, memory_mb=None, workers=1)
        assert server.answered == 1
    assert there == verify_documents(specs(), 10)
    assert not marker.exists()


# Started ahead: the load tells `check` of new claims, and the server starts there and then ----


class Recording:
    """A verifier that records when it was started and asked (it verifies nothing itself)."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def start(self) -> None:
        self.events.append("start")

    def ahead(self, start: bool) -> None:
        self.events.append("ahead")

    def verify(self, specs: Any, timeout: float, *, memory_mb: Any, workers: int) -> None:
        self.events.append("verify")
        return None  # verified in-process, as after a lost server


LESSON = "II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"


def _load(course: Path, store: Any, options: Options) -> None:
    from coursekit.engine import load_context
    from coursekit.project import find_project

    load_context(find_project(course, course), options, store)


def test_new_claims_start_the_server_during_the_load(tmp_path: Path) -> None:
    """Regression: the server started at the rules' first formula, after the whole load (at
    1,000 chapters ~1.4 s during which sympy could have been importing on the other core)."""
    from coursekit.store import MemoryStore

    course = tmp_path / "course"
    shutil.copytree(ROOT / "course", course)
    store = MemoryStore()
    cold = Recording()
    _load(course, store, Options(sympy=cold))
    assert set(cold.events) == {"start"}  # during the load: no rule has run yet
    unchanged = Recording()
    _load(course, store, Options(sympy=unchanged))
    assert unchanged.events == []  # every front matter was seen: nothing is started ahead
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text + "\nA sentence of prose, and no claim.\n", encoding="utf-8")
    prose = Recording()
    _load(course, store, Options(sympy=prose))
    assert prose.events == []  # the body changed, not the claims
    head, _, rest = text.partition("\nclaims:\n")
    assert rest, "the lesson holds claims"
    lesson.write_text(head + "\nclaims:\n" + rest.replace("value: ", "value: 1", 1), "utf-8")
    edited = Recording()
    _load(course, store, Options(sympy=edited))
    assert set(edited.events) == {"start"}
    structural = Recording()
    lesson.write_text(head + "\nclaims:\n" + rest.replace("value: ", "value: 2", 1), "utf-8")
    _load(course, store, Options(sympy=structural, formulas=False))
    assert structural.events == []  # --structural verifies no formula


def test_a_server_started_ahead_answers_as_one_started_when_asked() -> None:
    with SympyServer() as server:
        server.start()
        assert server.pid != 0
        server.start()  # once
        pid = server.pid
        assert server.verify(specs(), 10, memory_mb=None, workers=1) == verify_documents(
            specs(), 10
        )
        assert server.pid == pid
    assert server.pid == 0
