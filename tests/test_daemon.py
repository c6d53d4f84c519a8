"""`coursekit daemon`: a resident check answers its command line exactly as the normal path
would, only its user may ask it, and it steps aside when what it cannot watch changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursekit import daemon_wire

BUNDLED = Path(__file__).resolve().parent.parent / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/model-width.md"
SERVED = ["check", "--structural", "--format", "json"]  # no sympy, no programs: quick

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's"),
]


def _coursekit(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COURSEKIT_DAEMON_LOG"}
    return subprocess.run(
        [sys.executable, "-m", "coursekit", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _answered(project: Path) -> int:
    """How many checks the project's daemon has answered (-1: none runs)."""
    status = _coursekit(project, "daemon", "status").stdout
    if "no daemon runs" in status:
        return -1
    return int(status.split(" answered")[0].rsplit(" ", 1)[1])


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    # deeper than a socket's address can spell (108 bytes): the daemon must not care
    root = tmp_path / ("p" * 60) / ("q" * 60)
    shutil.copytree(BUNDLED, root / "course")
    yield root
    _coursekit(root, "daemon", "stop")


def _start(project: Path) -> None:
    started = _coursekit(project, "daemon", "start", *SERVED[1:])
    assert started.returncode == 0, started.stderr
    assert "answers `coursekit check --structural --format json` here" in started.stdout


def _same_as_fresh(project: Path) -> str:
    served = _coursekit(project, *SERVED)
    fresh = _coursekit(project, *SERVED, "--no-cache")
    assert (served.stdout, served.returncode) == (fresh.stdout, fresh.returncode)
    assert served.stderr == fresh.stderr == ""
    return served.stdout


def _edit(project: Path, n: int) -> None:
    lesson = project / "course" / LESSON
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text + f"\n\nA sentence with $q_z$, take {n}.\n", encoding="utf-8")


def test_it_answers_its_command_line_as_the_normal_path_does(project: Path) -> None:
    _start(project)
    assert len(str(project)) > 108
    before = _same_as_fresh(project)
    assert _answered(project) == 1
    _edit(project, 1)
    after = _same_as_fresh(project)
    assert after != before and "CK204" in after
    assert _answered(project) == 2
    other = _coursekit(project, "check", "--structural")  # another command line: not its own
    assert other.returncode == 1 and "Found 1 error" in other.stdout
    assert _answered(project) == 2


def test_a_change_outside_the_course_sends_it_away(project: Path) -> None:
    _start(project)
    (project / "pyproject.toml").write_text("[tool.coursekit]\n", encoding="utf-8")
    _same_as_fresh(project)  # answered by the normal path: the daemon said "gone"
    assert _answered(project) == -1


def test_a_linked_configuration_is_watched_through_its_link(project: Path) -> None:
    target = project.parent / "shared-pyproject.toml"
    target.write_text("[tool.coursekit]\n", encoding="utf-8")
    (project / "pyproject.toml").symlink_to(target)
    _start(project)
    _same_as_fresh(project)
    assert _answered(project) == 1
    target.write_text('[tool.coursekit]\nignore = ["CK305"]\n', encoding="utf-8")
    assert "CK305" not in _same_as_fresh(project)  # the normal path's answer, with the edit
    assert _answered(project) == -1


def test_stop_ends_it_and_removes_its_socket(project: Path) -> None:
    _start(project)
    folder = project / daemon_wire.FOLDER
    assert [p.suffix for p in folder.iterdir()] == [".sock"]
    stopped = _coursekit(project, "daemon", "stop")
    assert "stopped the daemon (pid" in stopped.stdout
    assert list(folder.iterdir()) == []
    assert "no daemon runs" in _coursekit(project, "daemon", "stop").stdout
    _same_as_fresh(project)


def test_a_second_start_finds_the_first(project: Path) -> None:
    _start(project)
    again = _coursekit(project, "daemon", "start", *SERVED[1:])
    assert again.returncode == 0
    assert "already answers" in again.stdout
    assert len(list((project / daemon_wire.FOLDER).iterdir())) == 1


@pytest.mark.parametrize("option", ["--changed", "--no-cache", "--output-file=r.json"])
def test_what_it_cannot_replay_is_refused(project: Path, option: str) -> None:
    refused = _coursekit(project, "daemon", "start", option)
    assert refused.returncode == 2
    assert "not with --changed, --no-cache or --output-file" in refused.stderr
    assert not (project / daemon_wire.FOLDER).exists()


def test_a_folder_others_may_enter_is_not_trusted(project: Path) -> None:
    _start(project)
    folder = project / daemon_wire.FOLDER
    folder.chmod(0o755)
    _same_as_fresh(project)
    folder.chmod(0o700)
    assert _answered(project) == 0


def test_something_else_where_a_socket_would_be_is_not_asked(tmp_path: Path) -> None:
    folder = tmp_path / daemon_wire.FOLDER
    folder.mkdir(parents=True, mode=0o700)
    (folder / "a.sock").write_text("not a socket\n", encoding="utf-8")
    (folder / "b.sock").symlink_to(folder / "a.sock")
    assert daemon_wire.ask(str(tmp_path), "a.sock", "anything") is None
    assert daemon_wire.ask(str(tmp_path), "b.sock", "anything") is None
    assert daemon_wire.ask(str(tmp_path), "absent.sock", "anything") is None


def test_it_exits_once_its_course_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc
    import threading

    from coursekit import daemon
    from coursekit.commands import check as check_command

    root = tmp_path / "project"
    shutil.copytree(BUNDLED, root / "course")
    monkeypatch.setattr(daemon, "LOOK_AFTER", 0.05)
    argv = [*SERVED, "--course", str(root / "course")]
    try:
        served = daemon.Daemon(argv, "a key", False, 3600.0)
        thread = threading.Thread(target=served.serve)
        thread.start()
        socket_path = root / daemon_wire.FOLDER / served.name
        assert socket_path.exists()
        shutil.rmtree(root / "course")
        thread.join(timeout=30)
        assert not thread.is_alive(), "it still serves a course that is gone"
        assert not socket_path.exists()
    finally:
        check_command.serve_from(None)  # this process's later checks are its own again
        gc.unfreeze()
