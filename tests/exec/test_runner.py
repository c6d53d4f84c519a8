"""The sandboxed runner: results as data, and hostile programs contained, one test each."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sandboxes import eventually, sandbox_pids, servers_of

from coursekit.exec import Job, Limits, Outcome, Runner, Status, child_environment, run_programs


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    """One pool of fork servers for the whole module: start-up is paid once."""
    with Runner(parallel=2) as pool:
        yield pool


FAST = Limits(wall_s=5, cpu_s=5)


def run(runner: Runner, source: str, limits: Limits = FAST) -> Outcome:
    [outcome] = runner.run([Job("p", textwrap.dedent(source), "solution.py")], limits)
    return outcome


def tree_state(root: Path) -> dict[str, tuple[int, int, str]]:
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        state[str(path.relative_to(root))] = (info.st_mode, info.st_mtime_ns, digest)
    return state


# ------------------------------------------------------------------ values come back as data


def test_scalars_arrays_dicts_tuples(runner: Runner) -> None:
    outcome = run(
        runner,
        """
        import numpy as np
        def solve():
            m = np.arange(6, dtype=np.int64).reshape(2, 3)
            return {
                "int": np.int64(26214400), "big": 2**80, "float": 0.1, "nan": float("nan"),
                "str": "grid", "bool": np.bool_(True), "none": None, "complex": 1 + 2j,
                "tuple": (1, (2.5, "x")), "list": [1, [2, 3]], "array": m,
                "floats": np.linspace(0, 1, 5), 3: "int key",
            }
        """,
    )
    assert outcome.status is Status.OK, outcome.message
    value = outcome.value
    assert value["int"] == 26214400 and type(value["int"]) is int
    assert value["big"] == 2**80
    assert value["float"] == 0.1 and np.isnan(value["nan"])
    assert value["str"] == "grid" and value["bool"] is True and value["none"] is None
    assert value["complex"] == 1 + 2j
    assert value["tuple"] == (1, (2.5, "x")) and value["list"] == [1, [2, 3]]
    assert value["array"].dtype == np.int64 and value["array"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert np.array_equal(value["floats"], np.linspace(0, 1, 5))
    assert value[3] == "int key"
    assert outcome.sandbox in ("namespace", "setuid", "basic")


def test_stdout_is_captured_and_cwd_is_fresh(runner: Runner, tmp_path: Path) -> None:
    outcome = run(
        runner,
        """
        import os, sys
        print("hello from the program")
        def solve():
            with open("scratch.txt", "w") as f:   # the working directory is writable
                f.write("x")
            return os.getcwd(), sorted(os.listdir(".")), sys.flags.isolated, sys.path[0]
        """,
    )
    assert outcome.ok, outcome.message
    cwd, listing, isolated, first_path = outcome.value
    assert outcome.stdout == "hello from the program\n"
    assert listing == ["scratch.txt"] and isolated == 1
    if runner.sandbox == "namespace":  # a tmpfs in the job's own root: nothing on the host
        assert cwd == "/job"
    else:
        assert eventually(lambda: not os.path.exists(cwd)), "the working directory is removed"
    assert first_path != ""  # no "current directory" entry on sys.path


def test_environment_is_scrubbed_and_threads_pinned(runner: Runner) -> None:
    outcome = run(runner, "import os\ndef solve():\n    return dict(os.environ)\n")
    assert outcome.ok, outcome.message
    env = outcome.value
    assert not [name for name in env if name.startswith("PYTHON")]
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        assert env[name] == "1"
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        assert env.get(name) == os.environ.get(name)
    assert child_environment({"OPENBLAS_CORETYPE": "Haswell", "SECRET": "x"}) == {
        **child_environment({}),
        "OPENBLAS_CORETYPE": "Haswell",
    }


def test_missing_solve_and_unsupported_value(runner: Runner) -> None:
    missing, weird = runner.run(
        [Job("a", "x = 1\n"), Job("b", "def solve():\n    return {1, 2}\n")], FAST
    )
    assert missing.status is Status.NO_RESULT and "defines no solve()" in missing.message
    assert weird.status is Status.NO_RESULT and "set" in weird.message


def test_exception_shows_traceback_tail(runner: Runner) -> None:
    outcome = run(
        runner,
        """
        def helper(n):
            return 1 / n

        def solve():
            return helper(0)
        """,
    )
    assert outcome.status is Status.ERROR
    assert outcome.message.startswith("raised ZeroDivisionError: division by zero")
    assert 'File "solution.py", line 6, in solve' in outcome.message
    assert 'File "solution.py", line 3, in helper' in outcome.message
    assert "return 1 / n" in outcome.message  # source lines, from the job's text
    assert "_server.py" not in outcome.message  # the runner's own frames are cut


def test_syntax_error(runner: Runner) -> None:
    outcome = run(runner, "def solve(:\n    return 1\n")
    assert outcome.status is Status.ERROR and "SyntaxError" in outcome.message


def test_parallel_order_and_progress() -> None:
    jobs = [Job(f"j{i}", f"def solve():\n    return {i}\n") for i in range(12)]
    seen: list[tuple[int, int, str]] = []
    outcomes = run_programs(
        jobs, FAST, parallel=2, progress=lambda d, t, o: seen.append((d, t, o.key))
    )
    assert [o.value for o in outcomes] == list(range(12))
    assert [d for d, _, _ in seen] == list(range(1, 13)) and {t for _, t, _ in seen} == {12}
    assert sorted(key for _, _, key in seen) == sorted(job.key for job in jobs)


def test_fingerprint() -> None:
    job = Job("a", "def solve():\n    return 1\n")
    assert job.fingerprint(Limits()) == Job("other key", job.source).fingerprint(Limits())
    assert job.fingerprint(Limits()) != Job("a", job.source + "\n").fingerprint(Limits())
    assert job.fingerprint(Limits()) != job.fingerprint(Limits(wall_s=3))
    assert len(job.fingerprint(Limits())) == 64


def test_import_does_not_load_numpy() -> None:
    code = "import sys, coursekit.exec; print('numpy' in sys.modules)"
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": src},
    )
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ hostile programs


def test_infinite_loop_hits_cpu_limit(runner: Runner) -> None:
    outcome = run(
        runner, "def solve():\n    while True:\n        pass\n", Limits(cpu_s=1, wall_s=8)
    )
    # The CPU limit, not the wall clock (on a loaded machine one CPU second may take long).
    assert outcome.status is Status.TIMEOUT and "CPU time limit" in outcome.message


def test_sleeping_program_hits_wall_clock(runner: Runner) -> None:
    start = time.monotonic()
    outcome = run(runner, "import time\ndef solve():\n    time.sleep(60)\n", Limits(wall_s=1))
    assert outcome.status is Status.TIMEOUT and "wall-clock" in outcome.message
    assert time.monotonic() - start < 5


def test_fifty_gigabyte_allocation(runner: Runner) -> None:
    outcome = run(runner, "def solve():\n    return bytearray(50 * 2**30)\n")
    assert outcome.status is Status.MEMORY and "MemoryError" in outcome.message
    # and numpy's own allocation path too
    outcome = run(runner, "import numpy as np\ndef solve():\n    return np.ones(50 * 2**30 // 8)\n")
    assert outcome.status is Status.MEMORY


def test_memory_limit_leaves_room_for_ordinary_work(runner: Runner) -> None:
    outcome = run(
        runner,
        "import numpy as np\ndef solve():\n"
        "    a = np.random.default_rng(0).random((300, 300))\n"
        "    return float(np.linalg.norm(a @ a))\n",
    )
    assert outcome.ok, outcome.message


def test_fork_bomb_is_contained_and_cleaned_up(runner: Runner) -> None:
    if runner.sandbox == "basic":
        pytest.skip("a fork bomb is only contained by a per-job uid (run as root)")
    outcome = run(
        runner,
        """
        import os, time
        def solve():
            while True:          # every process forks on; each child also leaves the group
                try:
                    if os.fork() == 0:
                        os.setsid()
                except OSError:
                    time.sleep(0.01)
        """,
        Limits(wall_s=2, cpu_s=5, processes=32),
    )
    assert outcome.status is Status.TIMEOUT, outcome.message
    assert eventually(lambda: not sandbox_pids(servers_of(runner))), sandbox_pids()
    assert run(runner, "def solve():\n    return 'still serving'\n").value == "still serving"


def test_background_child_does_not_outlive_a_successful_job(runner: Runner) -> None:
    if runner.sandbox == "basic":
        pytest.skip("needs the per-job uid")
    outcome = run(
        runner,
        """
        import os, time
        def solve():
            if os.fork() == 0:
                os.setsid()
                time.sleep(60)
                os._exit(0)
            return 1
        """,
    )
    assert outcome.ok, outcome.message
    assert eventually(lambda: not sandbox_pids(servers_of(runner))), sandbox_pids()


def test_a_gigabyte_of_output(runner: Runner) -> None:
    start = time.monotonic()
    outcome = run(
        runner,
        """
        import sys
        def solve():
            chunk = "x" * 2**20
            for _ in range(1024):
                sys.stdout.write(chunk)
            return 1
        """,
    )
    assert outcome.status is Status.OUTPUT and "output limit" in outcome.message
    assert len(outcome.stdout) == FAST.output_kb * 1024
    assert time.monotonic() - start < 5


def test_sys_exit_before_a_result(runner: Runner) -> None:
    outcome = run(runner, "import sys\nsys.exit(3)\ndef solve():\n    return 1\n")
    assert outcome.status is Status.EXITED and "sys.exit(3)" in outcome.message


def test_os_exit_before_a_result(runner: Runner) -> None:
    outcome = run(runner, "import os\ndef solve():\n    os._exit(0)\n")
    assert outcome.status is Status.EXITED
    assert "exited with status 0 before returning a result" in outcome.message


def test_segfault(runner: Runner) -> None:
    outcome = run(runner, "import ctypes\ndef solve():\n    return ctypes.string_at(0)\n")
    assert outcome.status is Status.CRASHED and "SIGSEGV" in outcome.message


HOSTILE_WRITER = """
import os
COURSE = {course!r}
def attempt(action):
    try:
        action()
        return "done"
    except OSError as exc:
        return errno_name(exc.errno)
def errno_name(number):
    import errno
    return errno.errorcode.get(number, str(number))
def solve():
    target = os.path.join(COURSE, "chapter.yaml")
    return {{
        "append": attempt(lambda: open(target, "a").write("hacked")),
        "truncate": attempt(lambda: open(target, "w").close()),
        "create": attempt(lambda: open(os.path.join(COURSE, "new.txt"), "w").close()),
        "mkdir": attempt(lambda: os.mkdir(os.path.join(COURSE, "dir"))),
        "remove": attempt(lambda: os.remove(os.path.join(COURSE, "problems", "solution.py"))),
        "rename": attempt(lambda: os.rename(target, target + ".bak")),
        "chmod": attempt(lambda: os.chmod(target, 0o600)),
        "utime": attempt(lambda: os.utime(target, (0, 0))),
    }}
"""


def make_course(root: Path, world_writable: bool) -> Path:
    course = root / "course"
    (course / "problems").mkdir(parents=True)
    (course / "chapter.yaml").write_text("id: II.2\n")
    (course / "problems" / "solution.py").write_text("def solve():\n    return 1\n")
    if world_writable:
        for path in [course, *course.rglob("*")]:
            path.chmod(0o777 if path.is_dir() else 0o666)
    return course


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A temporary directory anyone may enter (pytest's tmp_path sits under a 0700 parent,
    which would itself stop the sandboxed uid, and hide what the mount does)."""
    path = Path(tempfile.mkdtemp(prefix="coursekit-test-course-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


@pytest.mark.parametrize("world_writable", [False, True], ids=["ordinary", "world-writable"])
def test_write_into_course_tree_by_absolute_path(
    runner: Runner, open_dir: Path, world_writable: bool
) -> None:
    mode = runner.sandbox
    if mode == "basic" or (world_writable and mode != "namespace"):
        pytest.skip(f"the {mode} sandbox does not protect this tree")
    course = make_course(open_dir, world_writable)
    before = tree_state(course)
    outcome = run(runner, HOSTILE_WRITER.format(course=str(course)))
    assert outcome.ok, outcome.message
    assert tree_state(course) == before
    refused = set(outcome.value.values())
    assert "done" not in refused, outcome.value
    if mode == "namespace":  # the job's root holds the interpreter's files, not the course
        assert refused == {errno.errorcode[errno.ENOENT]}, outcome.value


def test_server_survives_and_still_computes(runner: Runner) -> None:
    outcomes = runner.run(
        [
            Job("bad", "import ctypes\ndef solve():\n    ctypes.string_at(0)\n"),
            Job("good", "import numpy as np\ndef solve():\n    return np.eye(2) @ [1.0, 2.0]\n"),
        ],
        FAST,
    )
    assert [o.status for o in outcomes] == [Status.CRASHED, Status.OK]
    assert outcomes[1].value.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("mode", ["setuid", "basic"])
def test_fallback_sandboxes_still_run_and_bound_programs(mode: str) -> None:
    if mode == "setuid" and os.geteuid() != 0:
        pytest.skip("the setuid sandbox needs root")
    jobs = [
        Job("ok", "import numpy as np\ndef solve():\n    return np.eye(2)\n"),
        Job("cpu", "def solve():\n    while True:\n        pass\n"),
        Job("segv", "import ctypes\ndef solve():\n    ctypes.string_at(0)\n"),
    ]
    outcomes = run_programs(jobs, Limits(cpu_s=1, wall_s=4), parallel=1, sandbox=mode)
    assert [o.status for o in outcomes] == [Status.OK, Status.TIMEOUT, Status.CRASHED]
    assert {o.sandbox for o in outcomes} == {mode}
    assert outcomes[0].value.tolist() == [[1.0, 0.0], [0.0, 1.0]]


FORGED_RESULT = """
import os, struct, time
def solve():
    body = {body!r}
    os.write(3, struct.pack(">I", len(body)) + body)  # the result pipe, written directly
    time.sleep({sleep})
    return 1
"""


@pytest.mark.parametrize(
    ("body", "sleep"),
    [
        (b'{"status": "ok", "value": 1e999}', 0),  # JSON the server cannot send on (inf)
        (b'{"status": "ok", "value": NaN}', 0),
        (b"not json at all", 0.5),  # a complete frame that is not JSON, the worker still running
        (b"[" * 100_000, 0),  # nested too deeply to parse
    ],
    ids=["inf", "nan", "garbage", "deep"],
)
def test_forged_result_frame_is_a_clean_crash_and_the_server_lives_on(
    body: bytes, sleep: int
) -> None:
    with Runner(parallel=1) as pool:
        pool.start()
        hello = pool._servers[0].hello
        assert hello is not None
        outcome = run(pool, FORGED_RESULT.format(body=body, sleep=sleep))
        assert outcome.status is Status.CRASHED, outcome.message
        assert "the runner" not in outcome.message, outcome.message  # not the runner's fault
        assert "could not be read" in outcome.message, outcome.message
        assert pool._servers[0].hello == hello  # the same server: it did not die
        assert run(pool, "def solve():\n    return 'still serving'\n").value == "still serving"


@pytest.mark.parametrize("ending", ["close", "kill"])
def test_a_server_leaves_no_job_folders_behind(ending: str) -> None:
    from coursekit.exec.runner import _Server

    server = _Server(sys.executable, "auto")
    server.wait_hello()
    workdirs = Path(server.workdirs)
    assert workdirs.is_dir()
    reply = server.execute(Job("k", "def solve():\n    return 1\n", "p.py"), Limits())
    assert reply is not None and reply.get("status") == "ok"
    # the server has forked its next worker already: a killed server leaves that folder
    getattr(server, ending)()
    assert not workdirs.exists()


def test_a_narrow_runner_uses_one_server_until_widened_then_all() -> None:
    """A run started narrow (beside other work) takes the rest of its servers when widened,
    and hands them the jobs not begun yet; outcomes stay in the jobs' order."""
    # each job long enough that the second server starts while jobs are still waiting
    source = "import time\ndef solve():\n    time.sleep(0.15)\n    return {n}\n"
    jobs = [Job(f"j{n}", source.format(n=n), "solution.py") for n in range(10)]
    seen: list[int] = []
    with Runner(parallel=2, narrow=True) as pool:
        assert [o.value for o in pool.run(jobs[:3], FAST)] == [0, 1, 2]
        assert len(pool._servers) == 1  # narrow: the second server never started

        def widen_after_the_first(done: int, total: int, outcome: Outcome) -> None:
            seen.append(len(pool._servers))
            if done == 1:
                pool.widen()

        outcomes = pool.run(jobs, FAST, widen_after_the_first)
        assert [o.value for o in outcomes] == list(range(10))
        assert [o.status for o in outcomes] == [Status.OK] * 10
        assert seen[0] == 1 and seen[-1] == 2, seen


def test_a_widen_while_the_first_server_starts_is_not_lost() -> None:
    """widen() landing after run() started its one server but before it began handing out
    jobs (the foreground asked for the programs as the background run began) still brings
    the second server in."""
    source = "import time\ndef solve():\n    time.sleep(0.15)\n    return {n}\n"
    jobs = [Job(f"j{n}", source.format(n=n), "solution.py") for n in range(10)]
    with Runner(parallel=2, narrow=True) as pool:
        real_start = pool.start

        def start_then_widen(count: int | None = None) -> None:
            real_start(count)
            if len(pool._servers) == 1:
                pool.widen()  # as the other thread would, in this very gap

        pool.start = start_then_widen  # type: ignore[method-assign]
        outcomes = pool.run(jobs, FAST)
        assert [o.value for o in outcomes] == list(range(10))
        assert len(pool._servers) == 2
