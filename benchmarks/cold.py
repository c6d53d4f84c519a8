#!/usr/bin/env python3
"""The cold path, this tree against another coursekit (today's main), side by side in one run.

    python benchmarks/cold.py --base /work/wt/base/.venv/bin/coursekit
    python benchmarks/cold.py --base ... --sizes 10,100,1000 --reps 3 --big-reps 1
    python benchmarks/cold.py --base ... --structural   # also schemas and rules alone, no sympy

Rows: cold full check (`--no-cache`, sympy and programs) of synthetic courses at each size, with
the peak RSS of the process tree (os.wait4: the largest process, parent or worker); with
`--first-run`, also an author's first check, the cache on and empty (it writes the pack and
every result as it goes: a peak of its own); and the
end-to-end cost of each of the bundled course's programs, as a fraction of a fresh interpreter
running that program: the median over rounds of (cold full - cold `--no-exec` of the same
round) / programs, over the median of `python -I` running the program's solve() once, and
beside it the programs' own solve() in a warm interpreter (the share no runner can remove;
the programs run beside the sympy work, so an end-to-end cost may be less). Runs of
the two tools alternate, so a load change on a shared machine moves both; every figure is a
median.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from generate import generate  # type: ignore[import-not-found]  # noqa: E402

#: (wall seconds, exit code, max RSS in MB of the process tree, CPU seconds of the tree)
Sample = tuple[float, int, int, float]


def timed(command: Sequence[str], cwd: Path) -> Sample:
    """Wall seconds, exit code, peak RSS and CPU seconds (user + system, the process and the
    workers it waited for) of one fresh process: on a shared machine the CPU time moves less
    with the load than the wall time does.

    A run that finds something (on a crowded machine: timeouts) says which codes, on stderr.
    """
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            out.seek(0)
            found = collections.Counter(re.findall(rb"\bCK[0-9]{3}\b", out.read()))
            codes = ", ".join(f"{k.decode()} x{n}" for k, n in sorted(found.items()))
            print(f"    ({command[0]}: exit {code}: {codes or 'no codes'})", file=sys.stderr)
    return elapsed, code, usage.ru_maxrss // 1024, usage.ru_utime + usage.ru_stime


def alternating(
    commands: dict[str, Sequence[str]],
    cwd: Path,
    reps: int,
    before: Callable[[], None] | None = None,
) -> dict[str, list[Sample]]:
    """Every run of each command, the commands taking turns (the order reversed every round);
    `before` is called before each run, outside its figures."""
    runs: dict[str, list[Sample]] = {name: [] for name in commands}
    for index in range(reps):
        order = list(commands) if index % 2 == 0 else list(reversed(commands))
        for name in order:
            if before is not None:
                before()
            runs[name].append(timed(commands[name], cwd))
    return runs


def summary(runs: list[Sample]) -> Sample:
    """Median wall seconds, last exit code, peak RSS and median CPU seconds."""
    return (
        statistics.median(run[0] for run in runs),
        runs[-1][1],
        max(run[2] for run in runs),
        statistics.median(run[3] for run in runs),
    )


def side_by_side(
    commands: dict[str, Sequence[str]],
    cwd: Path,
    reps: int,
    before: Callable[[], None] | None = None,
) -> dict[str, Sample]:
    return {name: summary(got) for name, got in alternating(commands, cwd, reps, before).items()}


def fresh_program(python: str, program: Path, reps: int) -> float:
    """Median seconds of a fresh interpreter running the program's solve() once."""
    code = "import runpy, sys; runpy.run_path(sys.argv[1])['solve']()"
    times = [
        timed([python, "-I", "-c", code, str(program)], program.parent)[0] for _ in range(reps)
    ]
    return statistics.median(times)


# Each program's solve() timed in one interpreter that already imported numpy and ran it once:
# what the program itself costs, which no runner can take away.
_OWN_COMPUTE = """
import json, runpy, statistics, sys, time
import numpy
reps = int(sys.argv[1])
times = []
for path in sys.argv[2:]:
    solve = runpy.run_path(path)["solve"]
    solve()
    runs = []
    for _ in range(reps):
        start = time.perf_counter()
        solve()
        runs.append(time.perf_counter() - start)
    times.append(statistics.median(runs))
print(json.dumps(times))
"""


def own_compute(python: str, programs: Sequence[Path], reps: int) -> list[float]:
    """Each program's own solve() time in seconds (median of `reps`, numpy warm)."""
    command = [python, "-I", "-c", _OWN_COMPUTE, str(reps), *map(str, programs)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return [float(t) for t in json.loads(done.stdout)]


def row(name: str, new: Sample, base: Sample, label: str = "new/base") -> None:
    (new_s, new_code, new_rss, new_cpu), (old_s, old_code, old_rss, old_cpu) = new, base
    print(
        f"  {name:<38} {new_s:7.2f} s {new_rss:5d} MB (exit {new_code})   "
        f"{old_s:7.2f} s {old_rss:5d} MB (exit {old_code})   {label} {new_s / old_s:.2f}"
        f"   cpu {new_cpu:.2f} s / {old_cpu:.2f} s = {new_cpu / old_cpu:.2f}",
        flush=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the coursekit to compare with")
    parser.add_argument("--new", default=str(Path(sys.executable).parent / "coursekit"))
    parser.add_argument("--sizes", default="10,100")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--big-reps", type=int, default=1, help="reps at sizes over 100")
    parser.add_argument("--work", type=Path, default=Path("/tmp/coursekit-cold"))
    parser.add_argument("--skip-programs", action="store_true")
    parser.add_argument(
        "--structural", action="store_true", help="also a cold --structural row at each size"
    )
    parser.add_argument(
        "--first-run", action="store_true", help="also a first run, the cache on and empty"
    )
    args = parser.parse_args(argv)
    tools = {"new": args.new, "base": args.base}
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()}; medians, runs alternating")

    if not args.skip_programs:
        programs = sorted((ROOT / "course").rglob("solution.py"))
        fresh = statistics.median(fresh_program(sys.executable, p, args.reps) for p in programs)
        commands: dict[str, Sequence[str]] = {}
        for name, tool in tools.items():
            commands[f"{name} full"] = [tool, "check", "--no-cache"]
            commands[f"{name} bare"] = [tool, "check", "--no-cache", "--no-exec"]
        # All four take turns, and each round's programs cost is that round's full minus its
        # --no-exec run: a load change between rounds cancels out.
        runs = alternating(commands, ROOT, max(args.reps, 7))
        for name in tools:
            full, bare = runs[f"{name} full"], runs[f"{name} bare"]
            row(f"bundled course, {name}: full / --no-exec", summary(full), summary(bare), "ratio")
            each = statistics.median(f[0] - b[0] for f, b in zip(full, bare, strict=True))
            each /= len(programs)
            print(
                f"  {name:>4}: {len(programs)} programs cost {each * 1000:6.1f} ms each end to end"
                f" = {each / fresh:.3f} of a fresh interpreter (target <= 0.1)"
            )
        print(f"  fresh `python -I` running one program's solve(): {fresh * 1000:.0f} ms (median)")
        # The programs' own compute is part of both figures above; it is the least an
        # end-to-end cost could be, were the programs not run beside the sympy work.
        mean_own = statistics.mean(own_compute(sys.executable, programs, args.reps))
        print(
            f"  the programs' own solve(), numpy warm: {mean_own * 1000:.1f} ms each (mean)"
            f" = {mean_own / fresh:.3f} of a fresh interpreter"
        )

    for size in (int(s) for s in args.sizes.split(",") if s):
        folder = args.work / f"c{size}"
        if not (folder / "course").exists():
            generate(size, folder)
        reps = args.reps if size <= 100 else args.big_reps
        commands = {n: [t, "check", "--course", "course", "--no-cache"] for n, t in tools.items()}
        got = side_by_side(commands, folder, reps)
        row(f"{size} chapters, cold full, new / base (x{reps})", got["new"], got["base"])
        if args.structural:
            structural: dict[str, Sequence[str]] = {
                n: [*c, "--structural"] for n, c in commands.items()
            }
            got = side_by_side(structural, folder, reps)
            row(f"{size} chapters, cold structural (x{reps})", got["new"], got["base"])
        if args.first_run:
            first: dict[str, Sequence[str]] = {n: c[:-1] for n, c in commands.items()}
            emptied = partial(shutil.rmtree, folder / ".coursekit_cache", ignore_errors=True)
            got = side_by_side(first, folder, reps, emptied)
            row(f"{size} chapters, first run, cache on (x{reps})", got["new"], got["base"])
    print(f"load average now {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
