#!/usr/bin/env python3
"""Formula verification on the bundled course: claims checked, ms per claim, cold vs warm.

    .venv/bin/python benchmarks/formulas.py [--repeat 5]

Prints medians, measured side by side in one run (machines here are shared and noisy):
- the cost of importing sympy (against `python -c pass`);
- every claim of the course checked on its own, in process, after sympy is warm: median ms;
- `coursekit check --no-exec` cold (empty cache: parse + sympy) against warm (nothing changed).
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

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def wall(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def median_of(repeat: int, args: list[str], cwd: Path, before: list[str] | None = None) -> float:
    samples = []
    for _ in range(repeat):
        if before:
            subprocess.run(before, cwd=cwd, stdout=subprocess.DEVNULL, check=False)
        samples.append(wall(args, cwd))
    return statistics.median(samples)


def per_claim_ms() -> list[float]:
    """Each claim of each lesson verified alone, in process, sympy already imported."""
    sys.path.insert(0, str(REPO / "src"))
    from coursekit.load import load_course
    from coursekit.verify import MathsSpec, verify_document

    course = load_course(REPO / "course", REPO).course
    times: list[float] = []
    import sympy  # noqa: F401  (warm: the import is measured separately)

    for chapter in course.chapters.values():
        for lesson in chapter.lessons.values():
            meta = lesson.meta
            for claim in meta.claims:
                spec = MathsSpec.build(
                    assume={k: v for k, v in meta.assume.model_dump().items() if v},
                    formulas=dict(meta.formulas),
                    claims=[claim.model_dump(by_alias=True, exclude_none=True)],
                )
                start = time.perf_counter()
                verify_document(spec, 10.0, isolate=False)
                times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    coursekit = [PYTHON, "-m", "coursekit"]

    floor = median_of(repeat, [PYTHON, "-c", "pass"], REPO)
    sympy_import = median_of(repeat, [PYTHON, "-c", "import sympy"], REPO)
    claims = per_claim_ms()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "course", work / "course")
        shutil.copy(REPO / "pyproject.toml", work / "pyproject.toml")
        check = [*coursekit, "check", "--no-exec"]
        cold = median_of(repeat, check, work, before=[*coursekit, "clean"])
        wall(check, work)
        warm = median_of(repeat, check, work)

    print(f"claims checked               {len(claims)}")
    print(
        f"median ms per claim          {statistics.median(claims):8.1f} ms  (max {max(claims):.1f})"
    )
    print(f"python -c pass               {floor * 1000:8.1f} ms")
    print(
        f"import sympy                 {(sympy_import - floor) * 1000:8.1f} ms  (above the floor)"
    )
    print(f"check --no-exec, cold cache  {cold * 1000:8.1f} ms")
    print(f"check --no-exec, warm cache  {warm * 1000:8.1f} ms  ({cold / warm:.1f}x faster)")


if __name__ == "__main__":
    main()
