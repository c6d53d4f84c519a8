"""`coursekit check`: load, run the rules, report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from coursekit.engine import check, relative_paths
from coursekit.project import Project
from coursekit.report import REPORTERS, Report
from coursekit.rules.base import ResultStore


def run(
    project: Project,
    paths: Sequence[Path],
    output_format: str,
    out: TextIO,
    color: bool = False,
    options: dict[str, Any] | None = None,
    store: ResultStore | None = None,
) -> int:
    result = check(project, relative_paths(project, paths), options=options, store=store)
    report = Report(diagnostics=result.diagnostics, sources=result.course.texts, color=color)
    out.write(REPORTERS[output_format](report))
    if result.crashed:
        return 2
    return 1 if report.errors else 0
