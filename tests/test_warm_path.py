"""The warm path: the same bytes as a cold run, and none of the heavy imports."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import make_course
from coursekit import warm, warm_stamps
from coursekit.cache_files import CACHE_DIR, FORMAT
from coursekit.cache_stats import RACY_NS
from helpers import generate

# The language server's libraries: `coursekit lsp` alone pays for them, never `check`.
LSP = ("pygls", "lsprotocol", "cattrs", "coursekit.lsp")

HEAVY = ("sympy", "numpy", "pydantic", "ruamel", "coursekit.rules", "coursekit.load", *LSP)
# What a warm run does not need either: the writer's journal (no interrupted write to finish).
WRITER = ("coursekit.journal",)


def _run(course: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable]
    if importtime:
        command += ["-X", "importtime"]
    command += ["-m", "coursekit", "check", "--course", str(course), *args]
    return subprocess.run(
        command, cwd=course.parent, capture_output=True, text=True, timeout=300, check=False
    )


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _heavy(names: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_warm_output_is_the_cold_output_byte_for_byte(tiny_course: Path, fmt: str) -> None:
    cold = _run(tiny_course, "--format", fmt, "--no-cache")
    first = _run(tiny_course, "--format", fmt)  # fills the cache
    warm = _run(tiny_course, "--format", fmt, importtime=True)
    assert first.stdout == cold.stdout and first.returncode == cold.returncode
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode
    assert not _heavy(_imported(warm.stderr), HEAVY), "the warm run was not a replay"
    assert not _heavy(_imported(warm.stderr), WRITER)


def test_warm_output_with_errors_is_the_cold_output(tiny_course: Path) -> None:
    chapter = tiny_course / "I/1-first/chapter.yaml"
    chapter.write_text(chapter.read_text().replace("maturity: M0", "maturity: M7"))
    cold = _run(tiny_course, "--no-cache")
    assert cold.returncode == 1
    _run(tiny_course)
    warm = _run(tiny_course, importtime=True)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode)
    assert not _heavy(_imported(warm.stderr), HEAVY)


def test_warm_run_of_a_full_course_imports_neither_sympy_nor_numpy(tmp_path: Path) -> None:
    course = generate(1, tmp_path)
    cold = _run(course)
    warm = _run(course, importtime=True)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode)
    assert not _heavy(_imported(warm.stderr), HEAVY)


def test_cold_check_without_formulas_or_problems_is_lazy(tiny_course: Path) -> None:
    """No formula and no problem in the course: neither sympy nor numpy is ever imported."""
    cold = _run(tiny_course, "--no-cache", importtime=True)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert not _heavy(_imported(cold.stderr), ("sympy", "numpy"))


def test_a_cold_check_never_imports_the_language_server(tiny_course: Path) -> None:
    cold = _run(tiny_course, "--no-cache", importtime=True)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert _imported(cold.stderr), "no import times were recorded"
    assert not _heavy(_imported(cold.stderr), LSP)


def test_the_journal_file_name_is_the_one_the_warm_path_looks_for(tmp_path: Path) -> None:
    from coursekit import journal
    from coursekit.cache_files import CACHE_DIR

    assert journal.journal_path(tmp_path) == tmp_path / CACHE_DIR / "journal.json"


# The fast path (coursekit.warm): a record replayed before the command line is imported --------
#
# A record is written only when nothing it watches changed within cache_stats.RACY_NS (2 s), so
# the projects below are built once per session (shared by the xdist workers), left to settle
# once, and each table row changes its own project. The environment is part of a record's key: the
# subprocesses get a fixed one (pytest rewrites PYTEST_CURRENT_TEST between phases, and each
# xdist worker has its own PYTEST_XDIST_WORKER).

ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
# What a replay never imports: the command line, nor `typing` (4 ms of a 20 ms replay)
CLI = ("coursekit.cli", "click", "typing")


def _ck(
    root: Path,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    importtime: bool = True,
    start: tuple[str, ...] = ("-m", "coursekit"),
) -> subprocess.CompletedProcess[str]:
    """`check --course ROOT/course ARGS` in ROOT, the way an author runs it (`start`: how the
    interpreter is told to run coursekit; each way gives the same command line)."""
    command = [sys.executable, *(["-X", "importtime"] if importtime else []), *start]
    command += ["check", "--course", str(root / "course"), *args]
    return subprocess.run(
        command,
        cwd=cwd or root,
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _replayed(run: subprocess.CompletedProcess[str]) -> bool:
    names = _imported(run.stderr)
    assert "coursekit.warm" in names, "no import times were recorded"
    return not _heavy(names, CLI)


def _records(root: Path) -> list[Path]:
    folder = root / warm.FOLDER
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _project(root: Path, broken: bool = False) -> Path:
    root.mkdir()
    course = make_course(root)
    if broken:  # an error: exit 1, and a report worth comparing
        chapter = course / "I/1-first/chapter.yaml"
        chapter.write_text(chapter.read_text().replace("maturity: M0", "maturity: M7"))
    (root / "pyproject.toml").write_text("[tool.other]\nsetting = 1\n")
    return root


def _edit_restoring_size_and_mtime(root: Path) -> None:
    chapter = root / "course/I/1-first/chapter.yaml"
    before = chapter.stat()
    text = chapter.read_text()
    chapter.write_text(text.replace("maturity: M0", "maturity: M9"))
    os.utime(chapter, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = chapter.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def _add_lesson_file(root: Path) -> None:
    (root / "course/I/1-first/lessons/stray.md").write_text(LESSON_TEXT)


def _remove_file(root: Path) -> None:
    (root / "course/I/1-first/lessons/intro.md").unlink()


def _add_folder(root: Path) -> None:
    (root / "course/I/2-second").mkdir()


def _edit_pyproject(root: Path) -> None:
    (root / "pyproject.toml").write_text('[tool.coursekit]\noutput-format = "json"\n')


def _journal(root: Path) -> None:
    document = {"version": 1, "state": "staging", "entries": [], "folders": []}
    (root / CACHE_DIR / "journal.json").write_text(json.dumps(document))


def _touch_module(root: Path) -> None:
    hints = root / "pkg/coursekit/hints.py"
    hints.write_text(hints.read_text() + "\n# edited after the record was written\n")


LESSON_TEXT = "---\ntitle: Stray\nstrand: basics\nreading_time: 3\n---\nNot listed anywhere.\n"

# this changed -> the fast path misses, and the output is the cold run's
TREE_CHANGES: dict[str, Callable[[Path], None]] = {
    "file edited in place, size and mtime restored": _edit_restoring_size_and_mtime,
    "file added in a lesson folder": _add_lesson_file,
    "file removed": _remove_file,
    "folder added": _add_folder,
    "pyproject.toml edited": _edit_pyproject,
    "journal present": _journal,
    "a coursekit module edited": _touch_module,
}


def _package_env(root: Path) -> dict[str, str]:
    return {**ENV, "PYTHONPATH": str(root / "pkg")}


def _start(root: Path, args: tuple[str, ...], env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "coursekit", "check", "--course", str(root / "course")]
    return subprocess.Popen(
        [*command, *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _finish(children: list[subprocess.Popen[str]]) -> list[tuple[str, int]]:
    return [(child.communicate(timeout=300)[0], child.returncode) for child in children]


def _settle(base: Path) -> dict[str, Path]:
    """Projects whose every watched stamp is older than RACY_NS, each with its record written."""
    base.mkdir(exist_ok=True)
    names = [*TREE_CHANGES, "broken", "clean", "excluded", *(f"damaged: {d}" for d in DAMAGE)]
    projects = {
        name: _project(base / f"p{i}", broken=name == "broken" or name.startswith("damaged"))
        for i, name in enumerate(names)
    }
    # a copy of coursekit itself (with its bytecode), so editing one of its modules is honest
    copy = projects["a coursekit module edited"]
    shutil.copytree(Path(warm.__file__).parent, copy / "pkg/coursekit")
    envs = {name: ENV for name in projects} | {"a coursekit module edited": _package_env(copy)}
    runs = {
        "clean": [(), ("--format", "json")],
        "broken": [(), ("--format", "json"), ("--exit-zero",)],
    }
    jobs = [(name, args) for name in projects for args in runs.get(name, [()])]
    # the runs that fill the whole-run cache, all at once (their records would be racy)
    _finish([_start(projects[name], args, envs[name]) for name, args in jobs])
    time.sleep(RACY_NS / 1e9 + 0.2)
    # the whole-run cache hits, now long enough after every write: each writes its record
    for (name, _), (_, code) in zip(
        jobs,
        _finish([_start(projects[name], args, envs[name]) for name, args in jobs]),
        strict=True,
    ):
        assert code in (0, 1), name
    for name, root in projects.items():
        assert _records(root), f"{name}: no record was written for a settled project"
    return projects


@pytest.fixture(scope="session")
def settled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`_settle`'s projects, built once per session: the first xdist worker builds them under a
    lock, the others wait and share them (each test changes only its own project)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return _settle(tmp_path_factory.mktemp("warm"))
    shared = tmp_path_factory.getbasetemp().parent  # this session's, common to its workers
    with open(shared / "warm-settled.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        index = shared / "warm-settled.json"
        if index.is_file():
            return {name: Path(path) for name, path in json.loads(index.read_text()).items()}
        projects = _settle(shared / "warm-settled")
        index.write_text(json.dumps({name: str(path) for name, path in projects.items()}))
        return projects


@pytest.mark.parametrize("change", list(TREE_CHANGES))
def test_a_change_misses_and_prints_the_cold_output(settled: dict[str, Path], change: str) -> None:
    root = settled[change]
    env = _package_env(root) if change == "a coursekit module edited" else ENV
    before = _ck(root, env=env)
    assert _replayed(before), f"{change}: the settled project was not replayed"
    TREE_CHANGES[change](root)
    after = _ck(root, env=env)
    assert not _replayed(after), f"{change}: replayed a stale record"
    cold = _ck(root, "--no-cache", env=env)
    assert (after.stdout, after.returncode) == (cold.stdout, cold.returncode)
    if change == "journal present":
        assert not (root / CACHE_DIR / "journal.json").exists(), "the journal was not recovered"


def test_the_record_watches_coursekit_itself(settled: dict[str, Path]) -> None:
    root = settled["clean"]
    decoded = [(p, warm.decode(p.read_bytes())) for p in _records(root)]
    (fields,) = [f for _, f in decoded if f is not None and "json" not in f[0]]
    named = [os.fsdecode(p) for joined, _ in fields[1] for p in joined.split(b"\0")]
    # (what lies below the folder it ran in, the project, is named relative to it)
    watched = {os.path.normpath(os.path.join(root, p)) for p in named}
    assert str(root / "course") not in named and "course" in named
    package = Path(warm.__file__).parent
    for module in package.rglob("*.py"):
        if "__pycache__" not in module.parts:
            assert str(module) in watched, module
    assert str(root / "course/I/1-first/lessons") in watched  # folders, too
    assert str(root / CACHE_DIR / "journal.json") in watched  # absent, and must stay so


VARIATIONS: dict[str, tuple[tuple[str, ...], dict[str, str], str]] = {
    # name: (arguments, environment changes, working folder below the project)
    "another format": (("--format", "sarif"), {}, ""),
    "a path named": (("course/I/1-first/lessons/intro.md",), {}, ""),
    "an environment variable": ((), {"GITHUB_ACTIONS": "true"}, ""),
    "another working folder": ((), {}, "course"),
}


@pytest.mark.parametrize("variation", list(VARIATIONS))
def test_another_command_line_misses(settled: dict[str, Path], variation: str) -> None:
    root = settled["broken"]
    args, extra, below = VARIATIONS[variation]
    assert _replayed(_ck(root)), "the settled project was not replayed"
    args = tuple(str(root / a) if a.startswith("course/") else a for a in args)
    env = {**ENV, **extra}
    varied = _ck(root, *args, env=env, cwd=root / below)
    assert not _replayed(varied)
    cold = _ck(root, *args, "--no-cache", env=env, cwd=root / below)
    assert (varied.stdout, varied.returncode) == (cold.stdout, cold.returncode)


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _random(data: bytes) -> bytes:
    return os.urandom(len(data))


def _foreign_format(data: bytes) -> bytes:
    body = data[len(warm.MAGIC) + 8 :]
    return b"coursekit-warm\0%d\0" % (warm.RECORD_FORMAT + 1) + data[len(warm.MAGIC) :][:8] + body


def _flipped_output(data: bytes) -> bytes:
    # a byte of the stored output changed, the checksum left as it was
    index = data.index(b"M7")
    return data[:index] + b"M8" + data[index + 2 :]


DAMAGE = {
    "truncated": _truncated,
    "random bytes": _random,
    "another format number": _foreign_format,
    "a changed byte": _flipped_output,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_record_is_a_silent_miss(settled: dict[str, Path], damage: str) -> None:
    root = settled[f"damaged: {damage}"]
    (record,) = _records(root)
    good = record.read_bytes()
    assert warm.decode(good) is not None
    record.write_bytes(DAMAGE[damage](good))
    assert warm.decode(record.read_bytes()) is None
    run = _ck(root)
    assert not _replayed(run)
    cold = _ck(root, "--no-cache")
    assert (run.stdout, run.stderr.count("Traceback"), run.returncode) == (
        cold.stdout,
        0,
        cold.returncode,
    )
    assert _replayed(_ck(root)), "the normal path did not write the record again"


@pytest.mark.parametrize(
    ("name", "args", "code"),
    [
        ("clean", (), 0),
        ("clean", ("--format", "json"), 0),
        ("broken", (), 1),
        ("broken", ("--format", "json"), 1),
        ("broken", ("--exit-zero",), 0),
    ],
)
def test_a_replay_prints_the_cold_bytes_and_imports_no_command_line(
    settled: dict[str, Path], name: str, args: tuple[str, ...], code: int
) -> None:
    root = settled[name]
    hit = _ck(root, *args)
    assert _replayed(hit)
    assert not _heavy(_imported(hit.stderr), (*HEAVY, *WRITER, *CLI, "pydantic", "tomllib"))
    cold = _ck(root, *args, "--no-cache", importtime=False)
    assert (hit.stdout, hit.returncode) == (cold.stdout, cold.returncode)
    assert hit.returncode == code


def test_the_installed_command_imports_nothing_of_its_own_before_a_replay(
    settled: dict[str, Path],
) -> None:
    """pip's console-script wrapper imports `re` before coursekit runs (~5 ms of a replay that
    takes ~15 ms at 100 chapters); the script coursekit installs (bin/coursekit) does not."""
    script = Path(sys.executable).parent / "coursekit"
    root = settled["clean"]
    hit = _ck(root, start=(str(script),))
    assert _replayed(hit)
    assert "re" not in _imported(hit.stderr)
    assert (hit.stdout, hit.returncode) == (_ck(root, importtime=False).stdout, 0)


def test_a_racy_tree_writes_no_record(tiny_course: Path) -> None:
    root = tiny_course.parent
    _ck(root, importtime=False)  # cold: every stamp is seconds old at most
    hit = _ck(root, importtime=False)  # the whole-run cache hits, but within RACY_NS
    assert hit.returncode == 0
    assert not _records(root)
    assert not _replayed(_ck(root))


@pytest.mark.parametrize(
    "args", [("--changed", "course/I/1-first/lessons/intro.md"), ("-o", "report.txt")]
)
def test_changed_and_output_file_are_never_replayed(
    settled: dict[str, Path], args: tuple[str, ...]
) -> None:
    # A project of its own: `-o report.txt` writes into the project folder, which every record
    # watches (a replay test of "clean" on the other worker would then miss).
    root = settled["excluded"]
    before = set(_records(root))
    assert before, "the settled project has no record"
    args = tuple(str(root / a) if a.startswith("course/") else a for a in args)
    for _ in range(2):
        run = _ck(root, *args)
        assert not _replayed(run)
    assert set(_records(root)) == before, "a record was written for an excluded command line"


def test_clean_removes_the_records(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    _ck(root, importtime=False)
    (root / warm.FOLDER).mkdir(parents=True, exist_ok=True)
    (root / warm.FOLDER / "x.rec").write_bytes(b"record")
    command = [sys.executable, "-m", "coursekit", "clean", "--course", str(root / "course")]
    subprocess.run(command, cwd=root, env=ENV, capture_output=True, check=True, timeout=120)
    assert not (root / CACHE_DIR).exists()


# The record format and the command lines, in process ------------------------------------------


def test_the_record_folder_is_inside_the_cache() -> None:
    assert Path(warm.FOLDER) == Path(CACHE_DIR) / FORMAT / "warm"


@pytest.mark.parametrize(
    ("argv", "replayable"),
    [
        (["check"], True),
        (["check", "--format", "json", "course/I"], True),
        (["check", "--changed", "x.md"], False),
        (["check", "-o", "out.txt"], False),
        (["check", "-oout.txt"], False),
        (["check", "--output-file=out.txt"], False),
        (["check", "--no-cache"], False),
        (["check", "--help"], False),
        (["--version"], False),
        (["owed"], False),
        ([], False),
    ],
)
def test_which_command_lines_may_be_replayed(argv: list[str], replayable: bool) -> None:
    assert warm.replayable(argv) is replayable


def test_a_record_round_trips_and_rejects_what_is_not_one() -> None:
    paths = [b"/a", b"/b/c"]
    data = warm.encode("key", paths, [1, 2, 3, 4, 5, 6] * 2, "out\n", 1)
    assert warm.decode(data) == (
        "key",
        [(b"/a\0/b/c", warm_stamps.packed([1, 2, 3, 4, 5, 6] * 2))],
        "out\n",
        1,
    )
    for bad in (b"", data[:-1], data + b"x", b"\0" * len(data), warm.MAGIC + b"0" * 8):
        assert warm.decode(bad) is None


@pytest.mark.parametrize(
    "count", [0, 1, warm_stamps.FIRST_BATCH, warm_stamps.FIRST_BATCH + 1, 1001]
)
def test_a_records_parts_hold_every_path_beside_its_stamp(count: int) -> None:
    paths = [b"/p%d" % n for n in range(count)]
    flat = [n for n in range(count) for n in (n, n + 1, n + 2, n + 3, n + 4, n + 5)]
    parts = warm_stamps.parts_of(paths, flat)
    assert len(parts) == (3 if count > warm_stamps.FIRST_BATCH else 1)
    listed = [p for joined, _ in parts for p in (joined.split(b"\0") if joined else [])]
    assert listed == paths
    assert [v for _, blob in parts for v in warm_stamps.unpacked(blob) or ()] == flat
    first, *rest = parts
    assert first[0].count(b"\0") + 1 == min(count, warm_stamps.FIRST_BATCH) or count == 0
    if rest:  # two halves: at most one path between them
        sizes = [joined.count(b"\0") + 1 for joined, _ in rest]
        assert abs(sizes[0] - sizes[1]) <= 1


def test_stamps_see_absence_and_type(tmp_path: Path) -> None:
    target = tmp_path / "f"
    first = warm_stamps.stamps([bytes(target)])
    assert first == list(warm_stamps.ABSENT)
    target.write_text("x")
    as_file = warm_stamps.stamps([bytes(target)])
    target.unlink()
    target.mkdir()
    assert warm_stamps.stamps([bytes(target)]) not in (as_file, first)


def test_a_record_behind_a_symbolic_link_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / warm.FOLDER).mkdir(parents=True)
    (real / warm.FOLDER / "r.rec").write_bytes(b"record")
    found = warm._read(str(real), "r.rec")
    assert found is not None and found[0] == b"record"
    linked = tmp_path / "linked"
    (linked / CACHE_DIR).mkdir(parents=True)
    (linked / CACHE_DIR / FORMAT).symlink_to(real / CACHE_DIR / FORMAT)
    assert warm._read(str(linked), "r.rec") is None
    (real / warm.FOLDER / "l.rec").symlink_to(real / warm.FOLDER / "r.rec")
    assert warm._read(str(real), "l.rec") is None


def test_a_symbolic_link_in_what_is_watched_writes_no_record(tiny_course: Path) -> None:
    from coursekit import cache_warm

    def entries(course: Path) -> list[str]:  # what the whole-run cache's digest lists
        return [str(p.relative_to(course)) for p in course.rglob("*")]

    def record(course: Path) -> bool:
        watched = cache_warm.watched_paths(root, course, True, [], entries(course))
        return cache_warm.save(root, watched, "output", 0)

    root = tiny_course.parent
    watched = cache_warm.watched_paths(root, tiny_course, True, [], entries(tiny_course))
    assert bytes(tiny_course / "I/1-first/lessons/intro.md") in watched
    (tiny_course / "I/link.md").symlink_to(tiny_course / "I/1-first/lessons/intro.md")
    with pytest.raises(cache_warm.Unwatchable):
        record(tiny_course)
    (tiny_course / "I/link.md").unlink()
    (root / "elsewhere").symlink_to(tiny_course)
    with pytest.raises(cache_warm.Unwatchable):  # the course reached through a link
        cache_warm.watched_paths(root, root / "elsewhere", True, [], [])


def test_racy_is_any_stamp_within_racy_ns_of_the_record() -> None:
    from coursekit.cache_warm import racy

    now = 10 * RACY_NS
    old = [0o100644, now - RACY_NS - 1, now - RACY_NS - 1, 1, 2, 3]
    assert not racy(old + list(warm_stamps.ABSENT), now)
    assert racy([*old, 0o100644, now - RACY_NS - 1, now - 5, 1, 2, 3], now)  # ctime alone
    assert racy([*old, 0o040755, now - 5, now - RACY_NS - 1, 1, 2, 3], now)  # mtime alone


def _files_changed_in_order(folder: Path, count: int) -> list[bytes]:
    """`count` files, the n-th changed n minutes after now (mtimes ahead of every ctime, so the
    order is theirs), listed oldest first."""
    now = time.time_ns()
    paths = []
    for n in range(count):
        path = folder / f"f{n}"
        path.write_text(str(n))
        os.utime(path, ns=(now, now + (n + 1) * 60 * 10**9))
        paths.append(bytes(path))
    return paths


def test_a_record_lists_the_most_recently_changed_paths_first(tmp_path: Path) -> None:
    from coursekit import cache_warm

    paths = _files_changed_in_order(tmp_path, 5)
    later = time.time_ns() + 3600 * 10**9  # past every mtime: nothing is racy
    assert cache_warm.save(tmp_path, paths, "out\n", 0, now_ns=later)
    (record,) = (tmp_path / warm.FOLDER).iterdir()
    fields = warm.decode(record.read_bytes())
    assert fields is not None
    _, parts, _, _ = fields
    assert parts == warm_stamps.parts_of(paths[::-1], warm_stamps.stamps(paths[::-1]))


def test_a_changed_stamp_is_seen_without_stamping_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_stamps, "FORK_FROM", 10**9)  # one process: every lstat is counted here
    monkeypatch.setattr(warm_stamps, "native_stamps", None)  # (the C stamps call no os.lstat)
    paths = _files_changed_in_order(tmp_path, 1000)[::-1]  # as a record lists them
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    real_lstat = os.lstat
    calls: list[bytes] = []

    def counting(path: bytes) -> os.stat_result:
        calls.append(path)
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", counting)
    assert warm_stamps.unchanged(parts)
    assert len(calls) == 1000  # a hit proves every path unchanged
    for edited, most in ((0, warm_stamps.FIRST_BATCH), (999, 1000)):
        Path(os.fsdecode(paths[edited])).write_text("edited")
        calls.clear()
        assert not warm_stamps.unchanged(parts)
        assert len(calls) <= most, (edited, len(calls))
        parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    shifted = warm_stamps.parts_of(
        paths[1:] + paths[:1], warm_stamps.stamps(paths)
    )  # stamps beside others
    assert not warm_stamps.unchanged(shifted)
    assert not warm_stamps.unchanged([(parts[0][0], b"not marshal"), *parts[1:]])
    assert not warm_stamps.unchanged([])


def test_a_miss_says_when_the_part_it_found_changed_last_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The normal path reads it (`warm_stamps.newest_change_ns`): a change no newer than its stat
    table was seen by the run that wrote it, and its lookup then likely hits."""
    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    paths = _files_changed_in_order(tmp_path, 100)[::-1]
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    assert warm_stamps.unchanged(parts) and warm_stamps.newest_change_ns is None
    edited = Path(os.fsdecode(paths[3]))
    edited.write_text("edited")
    assert not warm_stamps.unchanged(parts)
    recent = [os.lstat(path) for path in paths[: warm_stamps.FIRST_BATCH]]
    newest = warm_stamps.newest_change_ns
    assert newest == max(max(st.st_mtime_ns, st.st_ctime_ns) for st in recent)
    assert newest is not None and newest >= edited.stat().st_ctime_ns
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    later = Path(os.fsdecode(paths[-1]))
    later.write_text("edited")  # not among the recent ones: the time of the part it is in
    assert not warm_stamps.unchanged(parts)
    others = [os.lstat(path) for path in paths[warm_stamps.FIRST_BATCH :]]
    assert warm_stamps.newest_change_ns is not None
    assert warm_stamps.newest_change_ns <= max(max(st.st_mtime_ns, st.st_ctime_ns) for st in others)
    assert warm_stamps.newest_change_ns >= later.stat().st_ctime_ns
    later.unlink()  # an absent path is a change too
    assert not warm_stamps.unchanged(parts) and warm_stamps.newest_change_ns is not None


@pytest.mark.parametrize("edited", [None, "first part", "this process's half", "the child's half"])
def test_a_forked_child_compares_one_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str | None
) -> None:
    if not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one processor: the halves are compared one after the other")
    monkeypatch.setattr(warm_stamps, "FORK_FROM", 200)
    monkeypatch.setattr(
        warm_stamps, "native_stamps", None
    )  # (with them, a thread: test_warm_stamps)
    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    paths = _files_changed_in_order(tmp_path, 600)[::-1]
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        child = real_fork()
        if child:
            forks.append(child)
        return child

    monkeypatch.setattr(os, "fork", counting_fork)
    where = {"first part": 3, "this process's half": 100, "the child's half": 500}
    if edited is not None:
        Path(os.fsdecode(paths[where[edited]])).write_text("edited")
    assert warm_stamps.unchanged(parts) is (edited is None)
    assert len(forks) == (0 if edited == "first part" else 1)
    if edited is not None:  # whichever process found it, the change's time is known
        changed = os.lstat(paths[where[edited]])
        assert warm_stamps.newest_change_ns is not None
        assert warm_stamps.newest_change_ns >= changed.st_ctime_ns
    else:
        assert warm_stamps.newest_change_ns is None
    for child in forks:
        with pytest.raises(ChildProcessError):  # reaped
            os.waitpid(child, os.WNOHANG)


def test_the_shells_last_command_is_not_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # bash sets `_` to each command's path: `time coursekit check` must replay `coursekit check`
    monkeypatch.setenv("_", "/usr/bin/coursekit")
    plain = warm.key_material(["check"])
    monkeypatch.setenv("_", "/usr/bin/time")
    assert warm.key_material(["check"]) == plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert warm.key_material(["check"]) != plain
    assert warm.key_material(["check", "--format", "json"]) != warm.key_material(["check"])


def test_no_process_to_spare_compares_the_halves_one_after_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_stamps, "FORK_FROM", 200)
    monkeypatch.setattr(
        warm_stamps, "native_stamps", None
    )  # (with them, a thread: test_warm_stamps)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})

    def no_fork() -> int:
        raise BlockingIOError("fork: resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    paths = _files_changed_in_order(tmp_path, 600)[::-1]
    parts = warm_stamps.parts_of(paths, warm_stamps.stamps(paths))
    assert warm_stamps.unchanged(parts)
    monkeypatch.setattr(warm_stamps, "newest_change_ns", None)  # (restored for the checks after)
    Path(os.fsdecode(paths[500])).write_text("edited")  # in the half a child would compare
    assert not warm_stamps.unchanged(parts)
    assert warm_stamps.newest_change_ns is not None
    assert warm_stamps.newest_change_ns >= os.lstat(paths[500]).st_ctime_ns


# Run as `python -c PROGRAM check ...`: the same command line as `python -m coursekit check ...`
# (the record's key), each way of taking stamps saying on stderr that it was used.
STAMPS_PROGRAM = """
import sys
HIDE
import coursekit.warm_stamps as w
def said(name, real):
    def taking(paths):
        sys.stderr.write(name + " stamps\\n")
        return real(paths)
    return taking
if w.native_stamps is not None:
    w.native_stamps = said("C", w.native_stamps)
w.stamps = said("Python", w.stamps)
from coursekit.__main__ import main
main()
"""


@pytest.mark.parametrize("c_stamps", [True, False], ids=["C stamps", "Python stamps"])
def test_a_replay_with_either_way_of_taking_stamps(
    settled: dict[str, Path], c_stamps: bool
) -> None:
    """Without coursekit._stamps (an install with no compiler), the same record replays, its
    stamps taken in Python; with it, in C."""
    if c_stamps and warm_stamps.native_stamps is None:
        pytest.skip("coursekit._stamps was not built (no compiler at install)")
    root = settled["clean"]
    hide = "" if c_stamps else "sys.modules['coursekit._stamps'] = None"
    hit = _ck(root, start=("-c", STAMPS_PROGRAM.replace("HIDE", hide)))
    assert _replayed(hit), hit.stderr[-2000:]
    assert (hit.stdout, hit.returncode) == (_ck(root, importtime=False).stdout, 0)
    said = {line for line in hit.stderr.splitlines() if line.endswith(" stamps")}
    assert said == ({"C stamps"} if c_stamps else {"Python stamps"})
