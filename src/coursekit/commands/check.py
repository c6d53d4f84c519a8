"""`coursekit check`: replay an unchanged run, or load, run the rules, report.

Only the standard library is imported at module level: a warm run that replays its stored
output must not pay for pydantic, the rules, sympy or numpy.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from coursekit.project import Project
    from coursekit.rules.base import ResultStore


def run_cached(
    project: Project,
    paths: Sequence[Path],
    output_format: str,
    out: TextIO,
    color: bool,
    options: dict[str, Any],
    use_cache: bool = True,
) -> int:
    """The command: the whole-run cache around `run` (see coursekit.cache.RunCache)."""
    if not use_cache:
        _known_format(output_format)
        return run(project, paths, output_format, out, color=color, options=options)
    from coursekit import cache

    runs = cache.RunCache.for_check(project, paths, output_format, color, options)
    hit = runs.lookup()
    if hit is not None:
        out.write(hit[0])
        return hit[1]
    _known_format(output_format)
    buffer = io.StringIO()
    store = cache.DiskStore(project.root)
    code = run(project, paths, output_format, buffer, color=color, options=options, store=store)
    output = buffer.getvalue()
    out.write(output)
    if code in (0, 1):  # never keep a run in which coursekit itself failed
        runs.record(output, code)
    return code


class UnknownFormat(ValueError):
    """An output format no reporter is registered for (a usage error)."""


def _known_format(name: str) -> None:
    from coursekit.report import REPORTERS

    if name not in REPORTERS:
        raise UnknownFormat(f"'{name}' is not one of {', '.join(REPORTERS)}")


def run(
    project: Project,
    paths: Sequence[Path],
    output_format: str,
    out: TextIO,
    color: bool = False,
    options: dict[str, Any] | None = None,
    store: ResultStore | None = None,
) -> int:
    """Load, run the rules, report; the exit code (2 when a rule crashed)."""
    from coursekit.engine import check
    from coursekit.project import relative_paths
    from coursekit.report import REPORTERS, Report
    from coursekit.report.base import printable

    result = check(project, relative_paths(project.root, paths), options=options, store=store)
    report = Report(diagnostics=result.diagnostics, sources=result.course.texts, color=color)
    out.write(printable(REPORTERS[output_format](report)))  # valid UTF-8 in every format
    if result.crashed:
        return 2
    return 1 if report.errors else 0
