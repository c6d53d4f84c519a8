#!/usr/bin/env python3
"""Shape checking's share of a cold full check of the bundled course (budget: at most 5%).

    .venv/bin/python benchmarks/shapes.py [--repeat 7] [--base ../base]

Measured side by side in one run, samples interleaved, medians (the machine is shared):
- `check --no-exec --no-cache` (cold: every claim checked) on a copy of the bundled course,
  whose notation declares shapes;
- with `--base CHECKOUT` (today's main, with its own .venv), that checkout's coursekit and this
  one on a copy of *its* course, which declares no shapes: the same content, so the ratio is
  what this branch adds to a check when nothing is shaped;
- in process, the shape work alone on the bundled course: every lesson's formulas inferred, its
  shape claims checked, its `cost:`/`memory:` counts derived, every other claim's expressions
  and every labelled display shape-checked, as `coursekit check` does.
Exits 1 when the in-process shape work exceeds 5% of the cold check.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUDGET = 0.05


def wall(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, the process and its workers) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def shape_work_ms() -> float:
    """The shape inference of the whole course, in process, as the check does it."""
    sys.path.insert(0, str(REPO / "src"))
    from coursekit.config import Config
    from coursekit.load import load_course
    from coursekit.rules import _assume, _shapes
    from coursekit.rules._lesson_maths import scan_body
    from coursekit.rules.base import Context as RuleContext
    from coursekit.verify import Claim, parse_latex_sides
    from coursekit.verify.claims import Context
    from coursekit.verify.claims.shape import check_shape, counted, numbers_only, shape_verdicts
    from coursekit.verify.shapes import shape_misfit

    course = load_course(REPO / "course", REPO).course
    RuleContext(course=course, config=Config(), options={})
    # Everything the check would have parsed anyway is prepared outside the clock.
    lessons = []
    for chapter in course.chapters.values():
        declared = _shapes.inherited(course, chapter)
        notation = _assume.inherited(course, chapter)
        for lesson in chapter.lessons.values():
            meta = lesson.meta
            if not meta.formulas and not meta.claims:
                continue
            ctx = Context(
                _assume.merged(meta.assume.model_dump(), notation),
                dict(meta.formulas),
                shapes=declared.shapes,
                rowwise=declared.rowwise,
            )
            claims = [
                Claim.read(c.model_dump(by_alias=True, exclude_none=True)) for c in meta.claims
            ]
            sides = [
                side.node
                for equation in scan_body(lesson.body)[0]
                for side in parse_latex_sides(equation.latex)
                if side.node is not None
            ]
            lessons.append((ctx, claims, sides))
    start = time.perf_counter()
    for ctx, claims, sides in lessons:
        shape_verdicts(ctx)
        for claim in claims:
            if claim.kind == "shape":
                check_shape(ctx, claim)
                continue
            if claim.cost is not None or claim.memory is not None:
                claim, _ = counted(ctx, claim)
            numbers_only(ctx, claim)
        for node in sides:
            shape_misfit(node, ctx.shapes)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--base", type=Path, help="a checkout of main with its own .venv")
    args = parser.parse_args()
    mine = str(Path(sys.executable).parent / "coursekit")
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, tuple[str, Path]] = {"this branch, its course": (mine, Path(tmp) / "a")}
        sources = {"this branch, its course": REPO}
        if args.base:
            base = args.base.resolve()
            runs["this branch, base's course"] = (mine, Path(tmp) / "b")
            runs["base, base's course"] = (str(base / ".venv/bin/coursekit"), Path(tmp) / "b")
            sources["this branch, base's course"] = base
        for name, source in sources.items():
            shutil.copytree(source / "course", runs[name][1] / "course")
            shutil.copy(source / "pyproject.toml", runs[name][1] / "pyproject.toml")
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, (exe, cwd) in runs.items():  # interleaved: noise hits every run alike
                samples[name].append(wall([exe, "check", "--no-exec", "--no-cache"], cwd))
    work = statistics.median(shape_work_ms() for _ in range(args.repeat))
    walls = {name: statistics.median(w for w, _ in s) * 1000 for name, s in samples.items()}
    cpus = {name: statistics.median(c for _, c in s) * 1000 for name, s in samples.items()}
    for name in runs:
        print(
            f"check --no-exec --no-cache, {name:28} {walls[name]:8.1f} ms wall  {cpus[name]:8.1f} ms cpu"
        )
    if args.base:
        mine_b, base_b = "this branch, base's course", "base, base's course"
        print(
            f"this branch / base on the same course            {walls[mine_b] / walls[base_b]:8.3f}x wall"
            f"  {cpus[mine_b] / cpus[base_b]:.3f}x cpu"
        )
    share = work / walls["this branch, its course"]
    print(f"shape work alone, in process            {work:8.2f} ms  ({share:.2%} of the check)")
    return 0 if share <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
