"""A command's edits land all together or not at all, wherever the process is killed.

`COURSEKIT_TEST_KILL_AT=N` makes the process SIGKILL itself at its N-th write boundary (each
chunk written, each rename, each journal step). For N = 1, 2, ... a forked child writes the
command's planned changes until it dies there; after what the next run of any command does
first (`journal.recover`), the tree must be exactly the one from before the command or exactly
the one after it, with no temporary file or new folder left over.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coursekit import journal
from coursekit.authoring.changes import Changeset
from coursekit.authoring.fixes import Fixer, fixer_switch
from coursekit.authoring.scaffold import Scaffolder
from coursekit.commands import new
from coursekit.load import load_course
from coursekit.project import Project, find_project

from .conftest import II2, REAL_COURSE, run
from .test_fix import LESSON, _break_numbering

SECOND_LESSON = f"{II2}/lessons/counting-multiplications.md"
MAX_BOUNDARIES = 400  # a runaway guard: these commands pass a few dozen


def tree(root: Path) -> dict[str, bytes]:
    """Every file in the project except the cache: the course as the next run sees it."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".coursekit_cache" not in p.relative_to(root).parts
    }


def folders(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_dir() and ".coursekit_cache" not in p.relative_to(root).parts
    }


def _apply_killed_at(changes: Changeset, kill_at: int | None) -> int | None:
    """Apply `changes` in a forked child; the signal that ended it, or None if it finished."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.environ.pop("COURSEKIT_TEST_WRITE_DELAY", None)
            if kill_at is not None:
                os.environ["COURSEKIT_TEST_KILL_AT"] = str(kill_at)
            changes.apply()
            code = 0
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    assert os.WEXITSTATUS(status) == 0, "apply failed"
    return None


def _fresh(template: Path, root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(template, root, symlinks=True)


def _kill_at_every_boundary(
    tmp_path: Path, template: Path, plan: Callable[[Project], Changeset]
) -> int:
    """Kill the planned command's writes at each boundary in turn; how many boundaries there were.

    The plan is made once, in this process (the slow part); each child only writes.
    """
    root = tmp_path / "project"
    _fresh(template, root)
    changes = plan(find_project(root))
    before, before_folders = tree(root), folders(root)
    assert _apply_killed_at(changes, None) is None
    after, after_folders = tree(root), folders(root)
    assert after != before, "the command changed nothing: the test would prove nothing"
    for kill_at in range(1, MAX_BOUNDARIES):
        _fresh(template, root)
        signal_number = _apply_killed_at(changes, kill_at)
        if signal_number is None:
            assert tree(root) == after
            return kill_at - 1
        assert signal_number == signal.SIGKILL
        # what the next run of any command does first
        journal.recover(root)
        journal.sweep(root / "course")
        now = tree(root)
        assert now in (before, after), (
            f"killed at boundary {kill_at}: a mixed tree; differs from before in "
            f"{sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))}, "
            f"from after in {sorted(k for k in set(now) | set(after) if now.get(k) != after.get(k))}"
        )
        assert folders(root) == (before_folders if now == before else after_folders)
        assert not journal.journal_path(root).exists()
    raise AssertionError(f"still writing after {MAX_BOUNDARIES} boundaries")


def plan_fix(project: Project) -> Changeset:
    loaded = load_course(project.course_dir, project.root)
    config = project.config
    return Fixer(project.root, loaded, config, [], fixer_switch(config)).run()


def plan_new(kind: str, **options: Any) -> Callable[[Project], Changeset]:
    def plan(project: Project) -> Changeset:
        scaffolder = Scaffolder(
            project.root, project.course_dir, load_course(project.course_dir, project.root)
        )
        new._scaffold(scaffolder, kind, new.NewOptions(**options))
        return scaffolder.changes

    return plan


def _template(root: Path, checked_cache: Path) -> Path:
    shutil.copytree(REAL_COURSE, root / "course")
    (root / "pyproject.toml").write_text('[project]\nname = "copy"\n', encoding="utf-8")
    shutil.copytree(checked_cache, root / checked_cache.name)
    return root


@pytest.fixture
def template(tmp_path: Path, checked_cache: Path) -> Path:
    return _template(tmp_path / "template", checked_cache)


def test_fix_killed_at_every_boundary_leaves_the_old_tree_or_the_new_one(
    tmp_path: Path, template: Path
) -> None:
    _break_numbering(template)
    second = template / SECOND_LESSON
    second.write_text(
        second.read_text(encoding="utf-8") + "\nSee [Prop. 3](prop:3) once more.\n",
        encoding="utf-8",
    )
    boundaries = _kill_at_every_boundary(tmp_path, template, plan_fix)
    assert boundaries >= 6  # three files staged, committed: several places to die


@pytest.mark.parametrize(
    "plan",
    [
        plan_new("lesson", chapter="II.2", title="Masks, in pictures", strand="concept"),
        plan_new("chapter", book="II", title="Heads in parallel"),
        plan_new("exercise", chapter="II.2", title="Count the cells", program=True),
    ],
    ids=["lesson", "chapter", "exercise"],
)
def test_new_killed_at_every_boundary_leaves_the_old_tree_or_the_new_one(
    tmp_path: Path, template: Path, plan: Callable[[Project], Changeset]
) -> None:
    boundaries = _kill_at_every_boundary(tmp_path, template, plan)
    assert boundaries >= 3


def test_the_second_lesson_of_the_fix_is_really_touched(project_dir: Path) -> None:
    """Guards the fixture above: the fix spans chapter.yaml and two lessons."""
    _break_numbering(project_dir)
    second = project_dir / SECOND_LESSON
    second.write_text(
        second.read_text(encoding="utf-8") + "\nSee [Prop. 3](prop:3) once more.\n",
        encoding="utf-8",
    )
    _code, out = run("fix")
    assert "Fixed" in out, out
    for name in (f"{II2}/chapter.yaml", LESSON, SECOND_LESSON):
        assert f"  {name}\n" in out


CLI = [sys.executable, "-m", "coursekit"]


@pytest.fixture(scope="module")
def fixed_by_the_cli(
    tmp_path_factory: pytest.TempPathFactory, checked_cache: Path
) -> dict[str, bytes]:
    """The tree a `coursekit fix` left to finish (the real command line) makes of the broken
    template: the same for each attempt below, so run once per test process, not per attempt."""
    root = _template(tmp_path_factory.mktemp("fixed") / "project", checked_cache)
    _break_numbering(root)
    subprocess.run([*CLI, "fix"], cwd=root, stdout=subprocess.DEVNULL)
    return tree(root)


# The phases of `journal.commit` in order, as `_phase` sees them from outside the process.
PHASES = ("planned", "staging", "commit", "renaming", "renamed")
# Each write boundary sleeps this long (seconds). The narrowest phase aimed at, "renaming"
# (between the fix's two renames), lasts one boundary: it has to outlast a poll on a busy machine.
WRITE_DELAY = "0.1"


def _phase(root: Path) -> str | None:
    """Where `journal.commit` is, read from its journal and staged files; None: no journal (not
    yet, or no more) or one that could not be read (the caller polls again).

    "planned": journal in state "staging", nothing staged yet; "staging": some file staged;
    "commit": journal in state "commit", no staged file renamed yet; "renaming": some but not
    all renamed; "renamed": all renamed, the journal not yet removed.
    """
    try:
        document = json.loads(journal.journal_path(root).read_bytes())
        state = document["state"]
        staged = [(root / entry["staged"]).exists() for entry in document["entries"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if state == "staging":
        return "staging" if any(staged) else "planned"
    if all(staged):
        return "commit"
    return "renaming" if any(staged) else "renamed"


def _stop_in(proc: subprocess.Popen[bytes], root: Path, aim: str) -> str:
    """Poll until the running command is in phase `aim`, then SIGSTOP it; the phase it stopped
    in, read once it is frozen: exactly the one a SIGKILL sent now lands in."""
    deadline = time.monotonic() + 60
    seen = "planned"
    while (now := _phase(root)) != aim:
        seen = now or seen
        assert PHASES.index(seen) < PHASES.index(aim), f"polled too late: {seen!r}, not {aim!r}"
        assert proc.poll() is None, f"fix exited ({proc.returncode}) before {aim!r}"
        assert time.monotonic() < deadline, f"fix never reached {aim!r} (last seen: {seen!r})"
        time.sleep(0.001)
    proc.send_signal(signal.SIGSTOP)
    _pid, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), f"fix ended (wait status {status}) before it could be stopped"
    return _phase(root) or "no journal"


@pytest.mark.slow
@pytest.mark.parametrize("aim", ["staging", "commit", "renaming"])
def test_the_real_cli_killed_mid_write_by_the_delay_hook(
    tmp_path: Path, template: Path, aim: str, fixed_by_the_cli: dict[str, bytes]
) -> None:
    """The same through the real command line, SIGKILLed from outside in each phase of its write:
    while staging (the next command rolls it back: the old tree), at the commit point and while
    renaming (the next command completes it: the fixed tree)."""
    _break_numbering(template)
    root = tmp_path / "project"
    _fresh(template, root)
    before = tree(root)
    assert fixed_by_the_cli != before, "fix changed nothing: the test would prove nothing"
    env = {**os.environ, "COURSEKIT_TEST_WRITE_DELAY": WRITE_DELAY}
    proc = subprocess.Popen([*CLI, "fix"], cwd=root, env=env, stdout=subprocess.DEVNULL)
    try:
        stopped_in = _stop_in(proc, root, aim)
    finally:
        proc.kill()  # a stopped process dies too, without running another instruction
        proc.wait()
    assert stopped_in == aim, f"aimed at {aim!r}, killed in {stopped_in!r}"
    assert proc.returncode == -signal.SIGKILL
    recovered = subprocess.run([*CLI, "owed"], cwd=root, capture_output=True, check=True)
    if aim == "staging":
        assert b"rolled back an interrupted write" in recovered.stderr
        assert tree(root) == before
    else:
        assert b"completed an interrupted write of 2 file(s)" in recovered.stderr
        assert tree(root) == fixed_by_the_cli
    assert not journal.journal_path(root).exists()


def _interrupt_after_commit_point(root: Path) -> Changeset:
    """Kill `new lesson` just after the journal's commit point: staged, not yet renamed."""
    changes = plan_new("lesson", chapter="II.2", title="Masks, in pictures", strand="concept")(
        find_project(root)
    )
    for kill_at in range(1, MAX_BOUNDARIES):
        snapshot_before = tree(root)
        assert _apply_killed_at(changes, kill_at) == signal.SIGKILL
        path = journal.journal_path(root)
        if path.exists() and json.loads(path.read_text(encoding="utf-8"))["state"] == "commit":
            return changes
        journal.recover(root)
        assert tree(root) == snapshot_before
    raise AssertionError("never reached the commit point")


def test_the_next_command_completes_a_committed_write_and_says_so(project_dir: Path) -> None:
    changes = _interrupt_after_commit_point(project_dir)
    code, out = run("check", "--no-exec")
    assert "completed an interrupted write of 2 file(s)" in out
    assert code == 0, out
    assert all(
        change.path.read_text(encoding="utf-8") == change.new for change in changes.effective
    )
    assert not journal.journal_path(project_dir).exists()
    assert not [p for p in project_dir.rglob("*.tmp")]


def test_a_file_edited_after_the_crash_is_never_overwritten(project_dir: Path) -> None:
    changes = _interrupt_after_commit_point(project_dir)
    manifest = project_dir / II2 / "chapter.yaml"
    edited = manifest.read_text(encoding="utf-8") + "# edited by hand after the crash\n"
    manifest.write_text(edited, encoding="utf-8")
    before = tree(project_dir)
    code, out = run("owed")
    assert code == 2
    assert f"{II2}/chapter.yaml changed since an interrupted coursekit command" in out
    assert ".coursekit_cache/journal.json" in out
    assert tree(project_dir) == before
    assert len(changes.effective) == 2


@pytest.mark.parametrize(
    "target",
    ["../outside.md", "/etc/passwd-copy", "course/../../outside.md"],
)
def test_a_journal_naming_a_file_outside_the_project_is_refused(
    project_dir: Path, target: str
) -> None:
    journal.journal_path(project_dir).parent.mkdir(exist_ok=True)
    entry = {"target": target, "staged": str(Path(target).parent / ".ck-0a1b2c3d-0.tmp")}
    document = {
        "version": 1,
        "state": "commit",
        "folders": [],
        "entries": [{**entry, "old": None, "new": "0" * 64}],
    }
    journal.journal_path(project_dir).write_text(json.dumps(document), encoding="utf-8")
    before = tree(project_dir)
    code, out = run("check", "--structural")
    assert code == 2
    assert "cannot read the journal of an interrupted command" in out
    assert "Traceback" not in out
    assert tree(project_dir) == before


def test_new_and_fix_remove_temporary_files_an_older_coursekit_left(project_dir: Path) -> None:
    lessons = project_dir / II2 / "lessons"
    left = [lessons / ".model-width.md.k2j4_x9a.tmp", project_dir / II2 / ".ck-0a1b2c3d-1.tmp"]
    for path in left:
        path.write_text("half a fi", encoding="utf-8")
    kept = lessons / "notes.tmp"  # not a name coursekit makes
    kept.write_text("mine\n", encoding="utf-8")
    run("check", "--structural")
    assert all(path.exists() for path in left)  # check never writes the course
    _code, out = run("fix")
    assert not any(path.exists() for path in left)
    assert kept.exists()
    assert "removed" in out and ".model-width.md.k2j4_x9a.tmp" in out


def test_a_cache_folder_that_is_a_symlink_gets_no_journal(
    project_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    shutil.rmtree(project_dir / ".coursekit_cache")  # the one the fixture copied in
    (project_dir / ".coursekit_cache").symlink_to(elsewhere, target_is_directory=True)
    before = tree(project_dir)
    code, out = run(
        "new", "lesson", "--chapter", "II.2", "--title", "Masks, in pictures", "--strand", "concept"
    )
    assert code == 2
    assert "is a symbolic link" in out
    assert tree(project_dir) == before
    assert list(elsewhere.iterdir()) == []
