#!/usr/bin/env python3
"""What accounting for every number, display and order costs a cold structural check.

    benchmarks/numbers_overhead.py --base /work/wt/base/.venv/bin/coursekit
    benchmarks/numbers_overhead.py --base OLD --new NEW --chapters 100 --reps 7

Runs `coursekit check --no-cache --structural` on one generated course (benchmarks/generate.py)
with the two installs in turn, interleaved (old, new, old, new, ...) so that the load of a
shared machine falls on both alike, and prints the medians of wall-clock and of CPU time
(user + system of the process tree) and their ratios. The target of issue 13: the new scanning
costs at most 10% (CPU ratio <= 1.10; wall time on a crowded machine mostly measures the crowd).
"""

from __future__ import annotations

import argparse
import os
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


def timed(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of one fresh process and its children.

    CPU time (user + system, os.wait4) is what the work costs; wall time is what the author
    waits, and on a crowded machine it mostly measures the crowd.
    """
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


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
    wall: dict[str, list[float]] = {"base": [], "new": []}
    cpu: dict[str, list[float]] = {"base": [], "new": []}
    codes: dict[str, int] = {}
    for _ in range(args.reps):
        for name, exe in (("base", args.base), ("new", args.new)):
            seconds, used, code = timed([exe, *command], work)
            wall[name].append(seconds)
            cpu[name].append(used)
            codes[name] = code
    print(f"{args.chapters} chapters, cold structural check, medians of {args.reps} (interleaved)")
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ratios = {}
    for label, times in (("wall", wall), ("cpu", cpu)):
        base, new = statistics.median(times["base"]), statistics.median(times["new"])
        ratios[label] = new / base
        print(f"  {label:<4} base {base:.3f} s  new {new:.3f} s  ratio {new / base:.3f}")
    print(f"  exit codes: base {codes['base']}, new {codes['new']}")
    ratio = ratios["cpu"]
    print(f"  CPU ratio {ratio:.3f}  target <= 1.10  {'PASS' if ratio <= 1.10 else 'MISS'}")
    return 0 if ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
