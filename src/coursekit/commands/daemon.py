"""`coursekit daemon start|stop|status`: keep a `check` loaded between runs.

`start [CHECK OPTIONS]` starts `python -m coursekit.daemon` for `coursekit check [CHECK
OPTIONS]` as this process would run it (working directory, environment, terminals) and waits
until it has checked the course once; from then on that command line is answered by it
(`coursekit.daemon_wire`, before anything else is imported). `stop` ends every daemon of the
project, `status` lists them.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from coursekit import daemon_wire as wire
from coursekit import warm
from coursekit.project import Project

NOT_SERVED = (
    "coursekit: a daemon answers `coursekit check` as the warm path replays it: "
    "not with --changed, --no-cache or --output-file\n"
)


def start(project: Project, args: list[str], idle_minutes: float, out: TextIO, err: TextIO) -> int:
    argv = ["check", *args]
    if not warm.replayable(argv):
        err.write(NOT_SERVED)
        return 2
    key = warm.key_material(argv)
    name = wire.socket_name(key)
    shown = " ".join(["coursekit", *argv])
    running = wire.ask(str(project.root), name, ("status",), 5.0)
    if _is_status(running):
        assert isinstance(running, tuple)
        out.write(f"coursekit: a daemon (pid {running[1]}) already answers `{shown}` here\n")
        return 0
    message = marshal.dumps((argv, key, dict(os.environ), warm.isatty(1), idle_minutes * 60))
    # `-P`: the working directory (a course repository) must not come first on the import
    # path; the daemon imports from this process's path instead, and restores the environment.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    err.write(f"coursekit: starting a daemon for `{shown}` (it checks the course once first)\n")
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "coursekit.daemon"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # not ended with this terminal's job
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(message)
    child.stdin.close()
    said = child.stdout.readline().decode("utf-8", "replace").strip()
    child.stdout.close()
    if not said.startswith("ready "):
        child.wait()
        why = said[len("error ") :] if said.startswith("error ") else "it exited at once"
        err.write(f"coursekit: the daemon did not start: {why}\n")
        return 1
    seconds = time.monotonic() - started
    out.write(
        f"coursekit: the daemon (pid {said.split()[1]}) answers `{shown}` here "
        f"(ready in {seconds:.1f} s; `coursekit daemon stop` ends it)\n"
    )
    return 0


def stop(project: Project, out: TextIO) -> int:
    stopped = 0
    for name in _sockets(project):
        reply = wire.ask(str(project.root), name, (wire.STOP,), 30.0)
        if isinstance(reply, tuple) and reply[:1] == (wire.STOP,):
            out.write(f"coursekit: stopped the daemon (pid {reply[1]})\n")
            stopped += 1
    if not stopped:
        out.write("coursekit: no daemon runs for this project\n")
    return 0


def status(project: Project, out: TextIO) -> int:
    found = 0
    for name in _sockets(project):
        reply = wire.ask(str(project.root), name, ("status",), 5.0)
        if not _is_status(reply):
            continue
        assert isinstance(reply, tuple)
        _, pid, argv, since, answered, loads, patches = reply
        minutes = (time.time() - since) / 60
        out.write(
            f"pid {pid}: `coursekit {' '.join(argv)}`, up {minutes:.0f} min, "
            f"{answered} answered ({loads} loads, {patches} lesson edits patched in)\n"
        )
        found += 1
    if not found:
        out.write("coursekit: no daemon runs for this project\n")
    return 0


def _is_status(reply: object) -> bool:
    return isinstance(reply, tuple) and len(reply) == 7 and reply[0] == "status"


def _sockets(project: Project) -> list[str]:
    try:
        names = os.listdir(Path(project.root, wire.FOLDER))
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(".sock"))
