#!/usr/bin/env python3
"""What accounting for every number, display and order costs a cold structural check.

    benchmarks/numbers_overhead.py --base /work/wt/base/.venv/bin/coursekit
    benchmarks/numbers_overhead.py --base OLD --new NEW --chapters 100 --reps 7

Runs `coursekit check --no-cache --structural` on one generated course (benchmarks/generate.py)
with the two installs in turn, interleaved (old, new, old, new, ...) so that the load of a
shared machine falls on both alike, and prints the medians and their ratio. The target of
issue 13: the new scanning costs at most 10% (ratio <= 1.10).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate  # type: ignore[import-not-found]  # noqa: E402


def timed(command: list[str], cwd: Path) -> tuple[float, int]:
    """(seconds, exit code) of one fresh process, as benchmarks/run times it."""
    start = time.perf_counter()
    code = subprocess.run(command, cwd=cwd, capture_output=True, check=False).returncode
    return time.perf_counter() - start, code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the coursekit executable to compare with")
    mine = Path(sys.executable).parent / "coursekit"
    parser.add_argument("--new", default=str(mine) if mine.exists() else shutil.which("coursekit"))
    parser.add_argument("--chapters", type=int, default=100)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="coursekit-numbers-"))
    generate(args.chapters, work)
    command = ["check", "--course", "course", "--no-cache", "--structural"]
    times: dict[str, list[float]] = {"base": [], "new": []}
    codes: dict[str, int] = {}
    for _ in range(args.reps):
        for name, exe in (("base", args.base), ("new", args.new)):
            seconds, code = timed([exe, *command], work)
            times[name].append(seconds)
            codes[name] = code
    base, new = statistics.median(times["base"]), statistics.median(times["new"])
    print(f"{args.chapters} chapters, cold structural check, medians of {args.reps} (interleaved)")
    print(f"  base {base:.3f} s (exit {codes['base']})   new {new:.3f} s (exit {codes['new']})")
    ratio = new / base
    print(f"  ratio {ratio:.3f}  target <= 1.10  {'PASS' if ratio <= 1.10 else 'MISS'}")
    return 0 if ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
