"""A forked child answering through a pipe (`coursekit.forked`), shared by the warm path and
the whole-run lookup."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coursekit import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")


def test_a_child_answers_with_any_marshal_value_and_is_reaped() -> None:
    child = forked.in_child(lambda: {"changed": [1, 2], "when": 2**40})
    assert child is not None
    assert forked.collected(child) == {"changed": [1, 2], "when": 2**40}
    with pytest.raises(ChildProcessError):
        os.waitpid(child[0], os.WNOHANG)


def test_a_large_answer_is_written_to_a_widened_pipe_ahead_of_the_read(tmp_path: Path) -> None:
    """A child answering megabytes (the tree digest's every file) writes as much of it as the
    pipe holds and goes on to its `then` once the parent read the rest: a pipe of 64 KB made
    it wait for the parent at each 64 KB."""
    answer = bytes(range(256)) * 2048  # 512 KB: more than a default pipe, less than a wide one
    done = tmp_path / "done"
    for large in (False, True):
        child = forked.in_child(
            lambda: answer, lambda: done.write_text("then", encoding="utf-8"), large=large
        )
        assert child is not None
        # the parent reads nothing meanwhile: a child that can write its whole answer ends
        # it and goes on to `then` (waited for up to 10 s); one that cannot waits for the read
        waited = 0.0
        while not done.exists() and waited < (10 if large and _pipes_widen() else 0.3):
            time.sleep(0.05)
            waited += 0.05
        went_on = done.exists()
        assert forked.collected(child) == answer
        assert went_on is (large and _pipes_widen()), large
        done.unlink(missing_ok=True)


def _pipes_widen() -> bool:
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size", "rb") as limit:
            return int(limit.read()) >= 1 << 20 and hasattr(fcntl, "F_SETPIPE_SZ")
    except (ImportError, OSError, ValueError):
        return False


def test_a_child_that_fails_gives_no_answer() -> None:
    def failing() -> int:
        raise RuntimeError("no")

    assert forked.collected(forked.in_child(failing)) is forked.NO_ANSWER
    assert forked.collected(None) is forked.NO_ANSWER


def test_a_discarded_child_is_killed_only_when_asked(tmp_path: Path) -> None:
    written = tmp_path / "written"

    def slow() -> int:
        time.sleep(0.5)
        written.write_text("done", encoding="utf-8")
        return 1

    started = time.monotonic()
    child = forked.in_child(slow)
    assert child is not None
    forked.discard(child, kill=True)
    assert time.monotonic() - started < 0.4 and not written.exists()
    child = forked.in_child(slow)
    assert child is not None
    forked.discard(child)  # waited for: what it writes is written
    assert written.read_text(encoding="utf-8") == "done"


def test_the_warm_path_pays_no_typing_or_contextlib_for_it() -> None:
    """A warm run comparing its record's two halves imports this module (and every warm run
    `sealed`, a missed one `warm_recent`): `typing` and `contextlib` were ~7 ms of a ~60 ms
    replay at 1,000 chapters."""
    modules = "coursekit.warm, coursekit.warm_recent, coursekit.forked, coursekit.sealed"
    code = f"import sys, {modules}; print(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60
    )
    loaded = done.stdout
    assert "'coursekit.forked'" in loaded
    assert "'typing'" not in loaded and "'contextlib'" not in loaded
