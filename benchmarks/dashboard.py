#!/usr/bin/env python3
"""The owed dashboard at scale: a 1,000-chapter synthetic course renders in <= 2 s, <= 2 MB.

    .venv/bin/python benchmarks/dashboard.py                 # 1,000 chapters, median of 5
    .venv/bin/python benchmarks/dashboard.py --chapters 200 --reps 3

Loading the course is `owed`'s business whatever the format; this measures what the HTML format
adds: `report.html.render_html` on the loaded course's `CourseOwed` (programs not run, as with
`--no-exec`). It also prints the whole `owed --format html --no-exec` run for context. Exits 1
when a budget is exceeded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import generate  # type: ignore[import-not-found]  # noqa: E402

from coursekit.engine import load_context  # noqa: E402
from coursekit.project import find_project  # noqa: E402
from coursekit.report.html import render_html  # noqa: E402
from coursekit.rules.maturity import owed_of  # noqa: E402

SECONDS = 2.0
BYTES = 2_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chapters", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(args.chapters, root)
        project = find_project(root)
        _, ctx = load_context(project, {"exec": False, "jobs": os.cpu_count() or 1})
        owed = owed_of(ctx)
        books = {book_id: book.manifest.title for book_id, book in ctx.course.books.items()}
        times: list[float] = []
        page = ""
        for _ in range(args.reps):
            start = time.perf_counter()
            page = render_html(owed, "A Synthetic Course", books)
            times.append(time.perf_counter() - start)
        size = len(page.encode("utf-8"))
        start = time.perf_counter()
        command = [
            str(Path(sys.executable).parent / "coursekit"),
            "owed",
            "--no-exec",
            "--no-cache",
        ]
        subprocess.run(
            [*command, "--format", "html", "--output-file", str(root / "dashboard.html")],
            cwd=root,
            check=False,
        )
        whole = time.perf_counter() - start
    render = statistics.median(times)
    print(f"{len(owed.chapters)} chapters")
    print(f"render_html   {render:.3f} s median of {args.reps} (budget {SECONDS:.0f} s)")
    print(f"page size     {size / 1e6:.2f} MB (budget {BYTES / 1e6:.0f} MB)")
    print(f"owed --format html --no-exec --no-cache, whole run: {whole:.1f} s (loading included)")
    return 0 if render <= SECONDS and size <= BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
