"""The dashboard of a 1,000-chapter course renders in <= 2 s and stays <= 2 MB.

One chapter of benchmarks/generate.py's synthetic course (shaped like an M2 II.2, with every
file a count links to) is loaded for real, then repeated under 1,000 ids and folders as the
generator names them: the page is what `owed --format html` writes for such a course, without
loading 1,000 chapters here (benchmarks/dashboard.py does, and prints the same figures).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from coursekit.engine import load_context
from coursekit.options import Options
from coursekit.owed import ChapterOwed, CourseOwed
from coursekit.project import find_project
from coursekit.report.html import render_html
from coursekit.rules.maturity import owed_of
from dashboard_dom import chapter_rows

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from generate import CHAPTERS_PER_BOOK, generate, roman  # type: ignore  # noqa: E402

CHAPTERS = 1000


def _moved(chapter: ChapterOwed, old: str, number: int) -> ChapterOwed:
    book = roman((number - 1) // CHAPTERS_PER_BOOK + 1)
    index = (number - 1) % CHAPTERS_PER_BOOK + 1
    new = f"course/{book}/{index}-synthetic-chapter-{index}/"
    files = {
        name: tuple(path.replace(old, new) for path in paths)
        for name, paths in chapter.files.items()
    }
    return dataclasses.replace(
        chapter, id=f"{book}.{index}", book=book, path=chapter.path.replace(old, new), files=files
    )


def test_a_thousand_chapters_render_in_two_seconds_within_two_megabytes(tmp_path: Path) -> None:
    generate(1, tmp_path)
    _, ctx = load_context(find_project(tmp_path), Options(exec=False, jobs=1))
    (one,) = owed_of(ctx).chapters
    assert one.files["problems"] and one.files["exercises"] and one.strands["basics"].written
    old = one.path.removesuffix("chapter.yaml")
    owed = CourseOwed([_moved(one, old, n) for n in range(1, CHAPTERS + 1)])
    start = time.perf_counter()
    page = render_html(owed, "A Synthetic Course")
    seconds = time.perf_counter() - start
    assert seconds <= 2.0
    assert len(page.encode("utf-8")) <= 2_000_000
    assert len(chapter_rows(page)) == CHAPTERS
