"""The `coursekit` command (the console script and `python -m coursekit`).

A warm `check` (nothing it depends on changed since a run that was recorded) is answered by
`coursekit.warm` before the command line is imported; every other invocation goes to
`coursekit.cli` as before.
"""

from __future__ import annotations


def main(prog_name: str | None = None) -> None:
    from coursekit import warm

    warm.replay()  # exits when it answers
    from coursekit.cli import main as command_line

    command_line(prog_name=prog_name)


if __name__ == "__main__":
    main(prog_name="coursekit")
