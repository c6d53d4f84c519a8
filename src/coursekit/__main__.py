"""The `coursekit` command (the console script and `python -m coursekit`).

A `check` a daemon answers (`coursekit daemon start`) is answered by it through
`coursekit.daemon_wire`, and a warm one (nothing it depends on changed since a run that was
recorded) by `coursekit.warm`, both before the command line is imported; every other
invocation goes to `coursekit.cli` as before.
"""

from __future__ import annotations


def main(prog_name: str | None = None) -> None:
    from coursekit import daemon_wire, warm

    daemon_wire.replay()  # exits when a daemon answers
    warm.replay()  # exits when it answers
    from coursekit import compiled

    compiled.install()  # dataclasses' methods and the regular expressions, compiled once
    from coursekit.lazy import import_paused

    import_paused("coursekit.cli")  # click and the command line: ~60 ms of imports
    from coursekit.cli import main as command_line

    command_line(prog_name=prog_name)


if __name__ == "__main__":
    main(prog_name="coursekit")
