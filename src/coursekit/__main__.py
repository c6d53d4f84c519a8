"""The `coursekit` command (the console script and `python -m coursekit`).

A `check` a daemon answers (`coursekit daemon start`) is answered by it through
`coursekit.daemon_wire`, and a warm one (nothing it depends on changed since a run that was
recorded) by `coursekit.warm`, both before the command line is imported; every other
invocation goes to `coursekit.cli` as before.
"""

from __future__ import annotations

import atexit
import sys


def main(prog_name: str | None = None) -> None:
    from coursekit import daemon_wire, warm

    daemon_wire.replay()  # exits when a daemon answers
    warm.replay()  # exits when it answers
    from coursekit import compiled

    compiled.install()  # dataclasses' methods and the regular expressions, compiled once
    from coursekit.lazy import import_paused

    import_paused("coursekit.cli")  # click and the command line: ~60 ms of imports
    from coursekit.cli import main as command_line

    try:
        command_line(prog_name=prog_name)
    except SystemExit as exc:
        leave(exc)
        raise


def leave(exc: SystemExit) -> None:
    """Exit with `exc`'s code now, without tearing down what the command built, when nothing
    else would happen at exit: the exit handlers are run here, the standard streams flushed,
    and no other thread is alive (the interpreter would join one). After an edit to a course of
    1,000 chapters, freeing its loaded course one object at a time was ~30 ms of 0.57 s.
    Returns, for the normal exit, when that cannot be vouched for: a message to print as the
    code, another thread, a stream that fails to flush."""
    import os
    import threading

    code = exc.code
    if not (code is None or type(code) is int) or threading.active_count() != 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe, a closed stream: the normal exit reports it
        return
    atexit._run_exitfuncs()  # (and forgets them: the normal exit would not run them twice)
    try:
        sys.stdout.flush()  # what an exit handler printed
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code or 0)


if __name__ == "__main__":
    main(prog_name="coursekit")
