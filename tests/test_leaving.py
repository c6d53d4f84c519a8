"""The `coursekit` command leaves without tearing down what it built (`__main__.leave`), and
only when nothing else would happen at exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# A command line run as the console script runs it, with an exit handler that says who called
# it: `leave`, or the interpreter's own exit (no Python frame below it).
SCRIPT = """
import atexit, sys, threading, time, traceback
from coursekit.__main__ import main

def handler():
    frames = [frame.name for frame in traceback.extract_stack()[:-1]]
    sys.stdout.write("exit handler, called by %s\\n" % (frames[-1] if frames else "the exit"))

atexit.register(handler)
if sys.argv[1] == "thread":
    def late():
        time.sleep(0.3)
        sys.stdout.write("thread joined\\n")
    threading.Thread(target=late).start()
sys.argv = ["coursekit", *sys.argv[2:]]
main()
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(("args", "code"), [(["explain", "CK101"], 0), (["explain", "CK999"], 2)])
def test_a_command_leaves_with_its_code_its_output_flushed_its_handlers_run_once(
    tmp_path: Path, args: list[str], code: int
) -> None:
    done = _run(tmp_path, "alone", *args)
    assert done.returncode == code, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if "exit handler" in line] == [
        "exit handler, called by leave"  # and not again by the interpreter's exit
    ]
    assert lines[-1] == "exit handler, called by leave"  # after the command's own output
    if code == 0:
        assert lines[0].startswith("CK101/yaml-syntax")
    else:
        assert lines[0].startswith("coursekit: no rule matches 'CK999'")


def test_another_thread_alive_is_joined_by_the_normal_exit(tmp_path: Path) -> None:
    done = _run(tmp_path, "thread", "explain", "CK101")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["thread joined", "exit handler, called by the exit"]
