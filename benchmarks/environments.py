"""Two environments of one coursekit used in turn: a virtual environment's `check` and
pre-commit's hook, say. Each is a salt of its own (the interpreter's environment is part of
every cache key), and a cache that keeps one environment's results at a time makes every run
after a switch compute or read again what the other replaced.

`another` makes a second virtual environment that runs a tool's very code (its site folder
added to the new one's, `.pth` files and all), and `turns` times one lesson's prose edited
and checked from the two in turn.
"""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Protocol


class Rows(Protocol):
    def add(self, name: str, value: str, target: str = "", verdict: bool | None = None) -> None: ...


Timed = Callable[[list[str], Path], tuple[float, int, int]]


def another(binary: str, where: Path) -> list[str]:
    """The command line of `binary`'s coursekit run from a second virtual environment at
    `where` (made once): another `sys.prefix`, so another salt, and the same code."""
    python = Path(binary).with_name("python")
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True)
    second = where / "bin" / "python"
    if not second.exists():
        subprocess.run([python, "-m", "venv", "--without-pip", str(where)], check=True)
        own = subprocess.run([second, "-c", ask], capture_output=True, text=True, check=True)
        line = f"import site; site.addsitedir({site.stdout.strip()!r})\n"
        (Path(own.stdout.strip()) / "coursekit-benchmark.pth").write_text(line, encoding="utf-8")
    return [str(second), "-m", "coursekit"]


def turns(
    table: Rows,
    timed: Timed,
    folders: dict[str, Path],
    tools: dict[str, str],
    editors: dict[str, Callable[[int], None]],
    reps: int,
    size: int,
) -> None:
    """Per tool: the lesson's prose edited before each check, the checks alternating between
    the tool's own environment and a second one (`another`); the median of all of them."""
    for label, binary in tools.items():
        folder = folders[label]
        second = another(binary, folder.parent / f"env2-{label}")
        commands = [
            [binary, "check", "--course", "course"],
            [*second, "check", "--course", "course"],
        ]
        timed(commands[1], folder)  # its first run computes the course under its own salt
        times: list[float] = []
        peak = 0
        for index in range(reps):
            for turn, command in enumerate(commands):
                editors[label](2 * index + turn)
                seconds, _, rss = timed(command, folder)
                times.append(seconds)
                peak = max(peak, rss)
        name = f"{label} {size} chapters: prose edited, two environments in turn"
        table.add(name, f"{statistics.median(times):.2f} s", f"{peak} MB")
