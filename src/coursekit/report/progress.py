"""A one-line progress display on a terminal while problem programs run."""

from __future__ import annotations

from typing import TextIO


class TerminalProgress:
    """`progress(done, total, outcome)`: redraws one line on `stream`, erases it when done."""

    def __init__(self, stream: TextIO, what: str = "running problem programs") -> None:
        self.stream = stream
        self.what = what
        self.width = 0

    def __call__(self, done: int, total: int, outcome: object) -> None:
        line = f"coursekit: {self.what} {done}/{total}"
        self.width = max(self.width, len(line))
        self.stream.write("\r" + line.ljust(self.width))
        if done >= total:
            self.stream.write("\r" + " " * self.width + "\r")
        self.stream.flush()
