"""Hostile programs against the sandbox: each is reported with the right code within its limit,
reaches nothing of the host's, and leaves nothing behind; a legitimate problem run beside it in
the same batch is still checked.

The strongest mode (root: namespaces and a cgroup per job) is what CI runs; tests that need it
skip elsewhere, and say so, except where COURSEKIT_EXEC_REQUIRE_STRONGEST is set (.ci/run as
root): there they fail.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandboxes import eventually, sandbox_pids, sandbox_uids, servers_of

from coursekit.exec import Job, Limits, Outcome, Runner, Status
from coursekit.options import Options

TIGHT = Limits(wall_s=3, cpu_s=2, memory_mb=256, processes=8)
SENTINEL = Job(
    "sentinel",
    "import numpy as np\n\ndef solve():\n    return float(np.linalg.det(2 * np.eye(3)))\n",
    "sentinel.py",
)


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    with Runner(parallel=2) as pool:
        pool.start()
        yield pool


@pytest.fixture
def strongest(runner: Runner) -> Runner:
    if runner.sandbox != "namespace" or not runner.budget.startswith("cgroup"):
        why = f"needs the strongest mode (here: sandbox {runner.sandbox}, budget {runner.budget})"
        if os.environ.get("COURSEKIT_EXEC_REQUIRE_STRONGEST"):  # CI, as root: never skip
            pytest.fail(why)
        pytest.skip(why)
    return runner


def alive(pid: int) -> bool:
    try:
        return "\tZ" not in Path(f"/proc/{pid}/status").read_text().split("State:")[1][:4]
    except (OSError, IndexError):
        return False


def ipc_objects() -> set[str]:
    """Every SysV IPC object on the host (shared memory, semaphores, queues)."""
    found = set()
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as handle:
            found |= {f"{kind}:{line.split()[1]}" for line in handle.readlines()[1:]}
    return found


def job_folders(runner: Runner) -> list[str]:
    """Job folders in the servers' folders beyond each server's one waiting spare."""
    extra = []
    for server in runner._servers:
        jobs = [name for name in os.listdir(server.workdirs) if name.startswith("job-")]
        extra += jobs[1:]
    return extra


def hostile(runner: Runner, source: str, limits: Limits = TIGHT) -> Outcome:
    """Run ``source`` beside the sentinel; check the sentinel, the limit and the leftovers."""
    before_ipc = ipc_objects()
    start = time.monotonic()
    outcome, sentinel = runner.run(
        [Job("hostile", textwrap.dedent(source), "solution.py"), SENTINEL], limits
    )
    # Stopped at its limit (as the server measured it), and the run did not wait on it much
    # longer (a loaded machine delays every step a little).
    assert outcome.duration < limits.wall_s + 0.5, outcome.duration
    assert time.monotonic() - start < limits.wall_s + 5, "the run waited far past the limit"
    assert sentinel.ok and sentinel.value == pytest.approx(8.0), sentinel.message
    servers = servers_of(runner)
    assert eventually(lambda: not sandbox_pids(servers)), f"left: {sandbox_pids(servers)}"
    assert ipc_objects() == before_ipc, "IPC objects left behind"
    assert eventually(lambda: not job_folders(runner)), job_folders(runner)
    return outcome


# ------------------------------------------------------------------ one job, one budget


def _anonymous(pid: int) -> int:
    """The process's anonymous Pss, what it allocated itself (0 once it is gone)."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in rollup.splitlines():
        if line.startswith("Pss_Anon:"):
            return int(line.split()[1]) << 10
    return 0


class PeakMemory:
    """The peak of the sandboxed processes' own memory (anonymous Pss), sampled from outside."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            for pids in sandbox_uids(self.servers).values():  # one uid per job
                # The processes are read one after another, not at one instant: a child read
                # just before the kernel killed it would count beside the one whose memory
                # took its place. Each process counts with the lesser of two reads, so only
                # memory held across both counts (four children holding 120 MiB still do).
                first = [_anonymous(pid) for pid in pids]
                again = [_anonymous(pid) for pid in pids]
                self.peak = max(self.peak, sum(map(min, first, again)))
            time.sleep(0.005)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


FORKED_MEMORY = """
import os, time
def solve():
    children = []
    for _ in range(4):                    # each child stays under the per-process limit
        pid = os.fork()
        if pid == 0:
            block = b"\\x01" * (120 << 20)
            time.sleep(0.5)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return "all four children held 120 MiB"
"""


def test_memory_is_limited_per_job_not_per_process(strongest: Runner) -> None:
    with PeakMemory(servers_of(strongest)) as memory:
        outcome = hostile(strongest, FORKED_MEMORY)
    assert outcome.status is Status.MEMORY, outcome.message
    assert "every process it started" in outcome.message
    # Pss also counts each process's share of pages the server owns (about 20 MiB in all);
    # four children of 120 MiB each would be twice the limit.
    assert memory.peak <= (TIGHT.memory_mb + 40) << 20, f"peak {memory.peak >> 20} MiB"


def test_cpu_is_limited_per_job(strongest: Runner) -> None:
    with JobCpu(servers_of(strongest)) as watch:
        outcome = hostile(
            strongest,
            """
            import os
            def solve():
                for _ in range(3):             # four busy processes share one CPU budget
                    if os.fork() == 0:
                        break
                while True:
                    pass
            """,
            Limits(wall_s=8, cpu_s=1, processes=8),
        )
    assert outcome.status is Status.TIMEOUT and "CPU time" in outcome.message, outcome.message
    # Per process, each of the four would have had its own second: about 4 s in all.
    assert 0.5 < watch.cpu_seconds() < 1.8, watch.cpu


class JobCpu:
    """CPU seconds each sandboxed process under the servers used, sampled from outside."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers
        self.cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def _sample(self) -> None:
        while not self._stop.is_set():
            for pid in sandbox_pids(self.servers):
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                used = (int(fields[11]) + int(fields[12])) / self._tick  # utime + stime
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), used)
            time.sleep(0.01)

    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())

    def __enter__(self) -> JobCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_processes_are_limited_per_job(strongest: Runner) -> None:
    peak = 0

    def count() -> None:
        nonlocal peak
        while not done.is_set():
            jobs = sandbox_uids(servers_of(strongest)).values()
            peak = max([peak, *(len(pids) for pids in jobs)])
            time.sleep(0.01)

    done = threading.Event()
    watcher = threading.Thread(target=count, daemon=True)
    watcher.start()
    outcome = hostile(
        strongest,
        """
        import os, time
        def solve():
            while True:                    # a fork bomb that also leaves its session
                try:
                    if os.fork() == 0:
                        os.setsid()
                except OSError:
                    time.sleep(0.01)
        """,
        Limits(wall_s=1, cpu_s=5, processes=8),
    )
    done.set()
    watcher.join()
    assert outcome.status is Status.TIMEOUT, outcome.message
    assert 1 < peak <= 8


def test_without_a_cgroup_a_job_cannot_create_processes() -> None:
    with Runner(parallel=1, budget="single-process") as pool:
        assert pool.budget == "single-process"
        [outcome] = pool.run(
            [Job("fork", "import os\ndef solve():\n    os.fork()\n    return 1\n")], TIGHT
        )
    assert outcome.status is Status.ERROR and "BlockingIOError" in outcome.message, outcome.message


# ------------------------------------------------------------------ isolation


CTYPES_SOCKETS = """
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)

def inet(port):
    return struct.pack("<H", 2) + struct.pack(">H", port) + bytes([127, 0, 0, 1]) + bytes(8)

def unix_abstract(name):
    return struct.pack("<H", 1) + b"\\0" + name

def attempt(kind, address):
    fd = libc.socket(1 if kind == "unix" else 2, 2 if kind == "udp" else 1, 0)
    if fd < 0:
        return "socket: " + os.strerror(ctypes.get_errno())
    buf = ctypes.create_string_buffer(address, len(address))
    if kind == "udp":
        sent = libc.sendto(fd, b"stolen", 6, 0, buf, len(address))
        return "sent" if sent == 6 else "sendto: " + os.strerror(ctypes.get_errno())
    if libc.connect(fd, buf, len(address)) != 0:
        return "connect: " + os.strerror(ctypes.get_errno())
    libc.send(fd, b"stolen", 6, 0)
    return "connected"

def solve():
    return {{
        "tcp": attempt("tcp", inet({tcp})),
        "udp": attempt("udp", inet({udp})),
        "unix": attempt("unix", unix_abstract({unix!r})),
    }}
"""


def test_no_socket_reaches_the_host(strongest: Runner) -> None:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"coursekit-hostile-{os.getpid()}".encode()
    with tcp, udp, unix:
        tcp.bind(("127.0.0.1", 0))
        udp.bind(("127.0.0.1", 0))
        unix.bind(b"\0" + name)
        tcp.listen()
        unix.listen()
        for sock in (tcp, udp, unix):
            sock.setblocking(False)
        source = CTYPES_SOCKETS.format(
            tcp=tcp.getsockname()[1], udp=udp.getsockname()[1], unix=name
        )
        outcome = hostile(strongest, source)
        assert outcome.ok, outcome.message
        assert not {"connected", "sent"} & set(outcome.value.values()), outcome.value
        for receive in (tcp.accept, unix.accept, lambda: udp.recv(64)):
            with pytest.raises(BlockingIOError):  # nothing arrived
                receive()


def test_sysv_shared_memory_does_not_outlive_the_job(strongest: Runner) -> None:
    outcome = hostile(
        strongest,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def solve():
            return libc.shmget(0x434B0001, 1 << 20, 0o1000 | 0o666)   # IPC_CREAT
        """,
    )
    assert outcome.ok and outcome.value >= 0, outcome.message  # made in its own IPC namespace


def test_proc_lists_only_the_job(strongest: Runner) -> None:
    outcome = hostile(
        strongest,
        """
        import os
        def solve():
            seen = {}
            for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
                try:
                    seen[pid] = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
                except OSError as exc:
                    seen[pid] = type(exc).__name__
            return seen
        """,
    )
    assert outcome.ok, outcome.message
    assert list(outcome.value) == ["1"], outcome.value  # itself, pid 1 of its namespace
    assert not any("pytest" in line for line in outcome.value.values())


def test_host_files_are_not_readable(strongest: Runner) -> None:
    repo = Path(tempfile.mkdtemp(prefix="coursekit-hostile-repo-"))
    try:
        repo.chmod(0o755)
        (repo / ".git").mkdir(mode=0o755)
        (repo / ".git" / "config").write_text("[remote]\n\ttoken = secret\n")
        (repo / ".git" / "config").chmod(0o644)
        targets = ["/etc/passwd", "/etc/shadow", str(repo / ".git" / "config"), "/root"]
        outcome = hostile(
            strongest,
            f"""
            import os
            def solve():
                found = {{}}
                for path in {targets!r}:
                    try:
                        found[path] = os.listdir(path) if os.path.isdir(path) else open(path).read()
                    except OSError as exc:
                        found[path] = type(exc).__name__
                return found
            """,
        )
    finally:
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    assert outcome.ok, outcome.message
    for path, seen in outcome.value.items():
        if path == "/root":  # only the way down to the interpreter, if it lives there
            assert all(name.startswith(".") for name in seen), seen
        else:
            assert seen == "FileNotFoundError", (path, seen)


STDLIB_PROBE = """
import importlib, sys, json
SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "_tkinter",
        "__main__", "__phello__", "_testcapi", "_testinternalcapi", "_testbuffer",
        "_testimportmultiple", "_testmultiphase", "_xxtestfuzz", "_ctypes_test"}
ok = []
for name in sorted(sys.stdlib_module_names - SKIP):
    try:
        importlib.import_module(name)
    except Exception:
        continue
    ok.append(name)
print(json.dumps(ok))
"""

IMPORT_ALL = """
import importlib
NAMES = {names!r}
def solve():
    failed = {{}}
    for name in NAMES:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            failed[name] = repr(exc)
    return failed
"""


@pytest.fixture(scope="module")
def stdlib_names() -> list[str]:
    """The standard-library modules (and numpy's) that import in a fresh interpreter here."""
    result = subprocess.run(
        [sys.executable, "-I", "-c", STDLIB_PROBE], capture_output=True, text=True, check=True
    )
    import json

    names: list[str] = json.loads(result.stdout.splitlines()[-1])
    return [*names, "numpy.linalg", "numpy.fft", "numpy.random", "numpy.ma", "numpy.polynomial"]


@pytest.mark.parametrize("mode", ["auto", "setuid"])
def test_every_stdlib_module_imports_under_the_sandbox_uid(
    mode: str, stdlib_names: list[str]
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the sandbox uid exists only as root")
    assert len(stdlib_names) > 150
    with Runner(parallel=1, sandbox=mode) as pool:
        [outcome] = pool.run([Job("imports", IMPORT_ALL.format(names=stdlib_names))], Limits())
    assert outcome.ok, outcome.message
    assert outcome.value == {}


# ------------------------------------------------------------------ results cannot be forged


FORGED = """
import os, struct, time
def solve():
    body = b'{{"status": "ok", "value": 42}}'
    os.write(3, struct.pack(">I", len(body)) + body)   # a well-formed result, written directly
    {then}
"""


@pytest.mark.parametrize(
    ("then", "status", "words"),
    [
        ("while True: pass", Status.TIMEOUT, "limit exceeded"),
        ("time.sleep(60)", Status.TIMEOUT, "wall-clock limit"),
        ("os._exit(3)", Status.EXITED, "exited with status 3"),
        ("return 42", Status.CRASHED, "more than one frame"),
    ],
    ids=["loop", "sleep", "exit-3", "then-return"],
)
def test_a_forged_result_counts_for_nothing(
    runner: Runner, then: str, status: Status, words: str
) -> None:
    outcome = hostile(runner, FORGED.format(then=then), Limits(wall_s=1, cpu_s=1))
    assert outcome.status is status and words in outcome.message, outcome.message


def test_an_unencodable_value_says_so(runner: Runner) -> None:
    outcome = hostile(runner, "def solve():\n    return 10**5000\n")
    assert outcome.status is Status.NO_RESULT
    assert "cannot be encoded" in outcome.message and "status 72" not in outcome.message


@pytest.mark.parametrize(
    "steal",
    ["os.close(3)", "os.close(3); open('taken', 'w')"],
    ids=["closed", "replaced"],
)
def test_a_closed_result_channel_says_so(runner: Runner, steal: str) -> None:
    outcome = hostile(runner, f"import os\ndef solve():\n    {steal}\n    return 1\n")
    assert outcome.status is Status.EXITED, outcome.message
    assert "closed the result channel" in outcome.message


def test_control_characters_are_escaped(runner: Runner) -> None:
    outcome = hostile(
        runner,
        """
        import sys
        def solve():
            print("\\x1b[2Jcleared\\rover")
            sys.stderr.write("\\x1b]0;title\\x07")
            raise ValueError("\\x1b[31mred\\r\\u202eevil\\ud800")
        """,
    )
    assert outcome.status is Status.ERROR
    shown = outcome.message + outcome.stdout + outcome.stderr_tail + outcome.traceback
    assert not any(ch in shown for ch in "\x1b\r\x07\u202e\ud800"), ascii(shown)
    assert "\\x1b[31mred\\r\\u202eevil\\ud800" in outcome.message
    shown.encode("utf-8")  # a lone surrogate would make any output fail
    assert outcome.stdout == "\\x1b[2Jcleared\\rover\n"


# ------------------------------------------------------------------ nothing outlives the job


DAEMON = """
import os, time
def solve():
    if os.fork() == 0:               # the classic double fork
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    return "daemonised"
"""


def test_a_daemon_dies_with_its_job(runner: Runner) -> None:
    if runner.sandbox == "basic":
        pytest.skip("needs the per-job uid")
    outcome = hostile(runner, DAEMON)
    assert outcome.ok and outcome.value == "daemonised", outcome.message


def test_a_daemon_dies_with_its_job_in_the_setuid_sandbox() -> None:
    if os.geteuid() != 0:
        pytest.skip("the setuid sandbox needs root")
    with Runner(parallel=2, sandbox="setuid") as pool:
        pool.start()
        outcome = hostile(pool, DAEMON)
        assert outcome.ok and outcome.value == "daemonised", outcome.message


KILLED_CHECK = """
import sys
from coursekit.exec import Job, Limits, Runner
with Runner(parallel=2) as runner:
    runner.start()
    print(" ".join(str(s.hello["pid"]) for s in runner._servers), flush=True)
    runner.run([Job(str(i), "def solve():\\n    while True: pass\\n") for i in range(4)],
               Limits(wall_s=30, cpu_s=30))
"""


@pytest.mark.slow
def test_a_killed_check_leaves_nothing_behind(tmp_path: Path) -> None:
    before_ipc = ipc_objects()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    check = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHECK], stdout=subprocess.PIPE, text=True, env=env
    )
    assert check.stdout is not None
    servers = [int(pid) for pid in check.stdout.readline().split()]
    assert len(servers) == 2
    running: set[int] = set()  # the jobs' uids, while their servers still live

    def jobs_started() -> bool:
        running.update(sandbox_uids(servers))
        return len(running) >= 2 or os.geteuid() != 0

    assert eventually(jobs_started)
    check.send_signal(signal.SIGKILL)
    check.wait()
    check.stdout.close()
    assert eventually(lambda: not any(alive(pid) for pid in servers))
    assert eventually(lambda: not set(sandbox_uids()) & running), set(sandbox_uids()) & running
    assert eventually(lambda: not list(tmp_path.iterdir())), list(tmp_path.iterdir())
    assert ipc_objects() == before_ipc
    leftover_cgroups = [
        path
        for pattern in ("*/coursekit-job-*", "*/*/*/coursekit-job-*")
        for path in Path("/sys/fs/cgroup").glob(pattern)
        if any(f"coursekit-job-{pid}-" in path.name for pid in servers)
    ]
    assert not leftover_cgroups


# ------------------------------------------------------------------ a weaker mode says so


def test_a_weaker_mode_is_stated_in_one_line() -> None:
    from coursekit.exec import sandbox_note
    from coursekit.report import REPORTERS, Report

    def ran(mode: str, budget: str) -> Outcome:
        return Outcome("k", Status.OK, sandbox=mode, extra={"budget": budget})

    assert sandbox_note([ran("namespace", "cgroup1"), ran("namespace", "cgroup2")]) == ""
    basic = sandbox_note([ran("basic", "single-process")])
    assert "'basic' sandbox" in basic and "may not start processes" in basic
    assert "\n" not in basic and "docs/exec.md" in basic
    assert "'setuid' sandbox" in sandbox_note([ran("setuid", "cgroup1")])
    assert "no cgroup" in sandbox_note([ran("namespace", "single-process")])
    text = REPORTERS["text"](Report(diagnostics=[], notes=[basic]))
    assert text.splitlines()[-2:] == ["All checks passed.", basic]


def test_no_user_namespace_to_regain_capabilities(strongest: Runner) -> None:
    outcome = hostile(
        strongest,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        def solve():
            if libc.unshare(0x10000000) != 0:              # CLONE_NEWUSER
                return os.strerror(ctypes.get_errno())
            return "a user namespace of its own"
        """,
    )
    assert outcome.ok and outcome.value == os.strerror(1), outcome.value  # EPERM


@pytest.mark.parametrize("output_format", ["text", "json", "github", "sarif"])
def test_control_characters_never_reach_any_format(tmp_path: Path, output_format: str) -> None:
    import io

    from coursekit.commands.check import run as check_run
    from coursekit.project import find_project
    from helpers import PROBLEM, copy_golden

    course = copy_golden(tmp_path)
    program = course / PROBLEM.replace("problem.yaml", "solution.py")
    program.write_text(
        'def solve():\n    raise ValueError("\\x1b[2J\\x1b]0;owned\\x07\\rfake: all checks passed")\n',
        encoding="utf-8",
    )
    out = io.StringIO()
    project = find_project(course, course)
    code = check_run(project, [], output_format, out, options=Options(exec=True, jobs=1))
    assert code == 1
    shown = out.getvalue()
    assert "ValueError" in shown and "owned" in shown
    assert not any(ch in shown for ch in "\x1b\x07\r"), repr(shown)


def test_tmp_is_the_jobs_own_folder(runner: Runner) -> None:
    outcome = hostile(
        runner,
        """
        import os
        def solve():
            with open("/tmp/coursekit-scratch.txt", "w") as f:
                f.write("mine")
            return open("/tmp/coursekit-scratch.txt").read(), os.getcwd()
        """,
    )
    assert outcome.ok and outcome.value[0] == "mine", outcome.message
    if runner.sandbox == "namespace":
        assert outcome.value[1] == "/job"
        assert not os.path.exists("/tmp/coursekit-scratch.txt")  # not the host's /tmp
    else:
        os.remove("/tmp/coursekit-scratch.txt")


def test_check_states_a_weaker_sandbox_under_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools
    import io

    import coursekit.exec
    from coursekit.commands.check import run as check_run
    from coursekit.project import find_project
    from helpers import copy_golden

    weaker = functools.partial(coursekit.exec.run_programs, sandbox="basic")
    monkeypatch.setattr(coursekit.exec, "run_programs", weaker)
    course = copy_golden(tmp_path)
    out = io.StringIO()
    check_run(find_project(course, course), [], "text", out, options=Options(exec=True, jobs=1))
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("note: worked problems ran in the weaker 'basic' sandbox"), last
