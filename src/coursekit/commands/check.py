"""`coursekit check`: replay an unchanged run, or load, run the rules, report.

Only the standard library is imported at module level: a warm run that replays its stored
output must not pay for pydantic, the rules, sympy or numpy.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from coursekit.cache import RunCache
    from coursekit.cache_pack import PackedStore
    from coursekit.load import LoadResult
    from coursekit.load.listing import KnownTree
    from coursekit.options import Options
    from coursekit.project import Project
    from coursekit.store import ResultStore

    # A course kept loaded between runs (`coursekit.resident.ResidentCourse.run`, in the
    # daemon's process): `run_cached`'s arguments but the cache's, its exit code.
    Resident = Callable[[Project, Sequence[Path], str, TextIO, bool, Options], int]


_resident: Resident | None = None


def serve_from(resident: Resident | None) -> None:
    """Answer this process's later cached `check`s through `resident` (the daemon's course)
    rather than the whole-run cache and a load: they then cost what changed since the last."""
    global _resident
    _resident = resident


def run_cached(
    project: Project,
    paths: Sequence[Path],
    output_format: str,
    out: TextIO,
    color: bool,
    options: Options,
    use_cache: bool = True,
    settled: Callable[[str, int, Sequence[str]], object] | None = None,
) -> int:
    """The command: the whole-run cache around `run` (see coursekit.cache.RunCache).

    `settled(output, code, entries)` is called when the whole-run cache replays a run: its
    inputs are then known unchanged since a run that stored it (the warm path's record,
    coursekit.cache_warm); `entries` are the course's files and folders the cache just
    stat-ed. Not after a run that computed its output: that follows an edit, and recording it
    (a stat of every watched path, a record of the whole output) would add ~0.15 s to every
    edit of a 1,000-chapter course for a replay the next unchanged run records anyway.
    """
    if not use_cache:
        _known_format(output_format)
        return run(project, paths, output_format, out, color=color, options=options)
    if _resident is not None:
        _known_format(output_format)
        return _resident(project, paths, output_format, out, color, options)
    from coursekit import collector

    # A run from the cache makes next to no garbage cycles (coursekit.collector).
    with collector.held():
        from coursekit import cache, warm_stamps
        from coursekit.cache_pack import PackedStore

        runs = cache.RunCache.for_check(project, paths, output_format, color, options)
        store = PackedStore(cache.DiskStore(project.root))

        def meanwhile() -> None:
            _known_format(output_format)
            store.read_ahead()

        # At 1,000 chapters, when the warm path saw a change the last run did not, a forked child
        # takes the digest (~28,000 stamps, ~0.2 s) while this process imports what the miss needs
        # and reads the last run's pack (~0.13 and ~0.08 s).
        hit = runs.lookup(meanwhile, warm_stamps.newest_change_ns)
        if hit is not None:
            out.write(hit[0])
            if settled is not None and not runs.just_edited():  # a racy record would be refused
                settled(*hit, runs.course_entries())
            return hit[1]
        from dataclasses import replace

        from coursekit.cache_seen import SeenTree

        buffer = io.StringIO()
        with _sympy_server(options) as server:
            # Before anything heavy is imported (the reporters import the models): sympy then
            # imports on the other core while this one imports the rest and loads the course.
            news = _new_maths(project, runs, store) if server is not None else None
            if news is not None:
                server.ahead(news)
            _known_format(output_format)
            runs.keep_table()  # ~10 MB at 1,000 chapters, not held through the run
            # The load reads the tree as the lookup just saw it, the texts it knows from the pack.
            digested = runs.digested()
            seen = None if digested is None else SeenTree(store, project.course_dir, *digested)
            options = replace(options, sympy=server)
            code = run(project, paths, output_format, buffer, color, options, store, seen)
        store.save()
        output = buffer.getvalue()
        out.write(output)
        # Never keep a run in which coursekit itself failed, nor one whose verdicts depended on the
        # clock (a timeout, a killed worker; a file the author changed after the lookup hashed it):
        # replaying it would repeat a passing moment forever.
        if code in (0, 1) and not store.declined:
            runs.record(output, code)
        return code


def _new_maths(project: Project, runs: RunCache, store: PackedStore) -> bool | None:
    """Whether the edit the lookup found brought a lesson claims or formulas no run has seen
    (coursekit.frontmatter; None: too many lessons to tell): its texts before the edit are
    the pack's, by their digests."""
    from coursekit.cache_pack import TEXTS
    from coursekit.frontmatter import brings_new_maths

    def before(digest: str) -> str | None:
        text = store.peek(TEXTS, digest)
        return text if type(text) is str else None

    return brings_new_maths(project.course_dir, runs.edited(), before)


def changed_paths(project: Project, paths: Sequence[Path], err: TextIO) -> list[Path] | None:
    """`--changed`: what to report on for a change (see coursekit.changed).

    The given paths plus the course files the change deletes and the manifests listing them;
    [] (the whole course) when git cannot tell; None when nothing in the course changed.
    """
    from coursekit import changed

    try:
        deleted = changed.deleted_targets(project.course_dir)
    except changed.GitUnavailable as exc:
        err.write(f"coursekit: git cannot list deleted files ({exc}); reporting the whole course\n")
        return []
    if not deleted and not changed.in_course(project.course_dir, paths):
        return None
    return [*paths, *deleted]


def course_paths(project: Project, paths: Sequence[Path], err: TextIO) -> list[Path]:
    """The paths in the course folder (or holding it); the others are named on `err`.

    [] when none is: "no course files matched" (`coursekit check README.md` checks nothing,
    so it must not say "All checks passed.").
    """
    course = project.course_dir.resolve()
    inside: list[Path] = []
    outside: list[Path] = []
    for path in paths:
        absolute = path.resolve()
        if absolute.is_relative_to(course) or course.is_relative_to(absolute):
            inside.append(path)
        else:
            outside.append(path)
    if not inside:
        here = Path.cwd().resolve()
        where = course.relative_to(here) if course.is_relative_to(here) else course
        shown = ", ".join(str(p) for p in outside)
        err.write(f"coursekit: no course files matched: {shown} (the course is {where}/)\n")
        return []
    for path in outside:
        err.write(f"coursekit: {path}: not in the course; ignored\n")
    return inside


def report_target_problem(project: Project, path: Path) -> str | None:
    """Why `--output-file PATH` must not be written, if it must not: it is inside the course."""
    if path.resolve().is_relative_to(project.course_dir.resolve()):
        return f"{path}: inside the course folder; the report would become course content"
    return None


def write_report(path: Path, text: str) -> None:
    """`--output-file`: the whole report or nothing (an atomic replace)."""
    from coursekit.atomic import atomic_write_text

    atomic_write_text(path, text)


def _sympy_server(options: Options) -> Any:
    """Where this run verifies formulas (coursekit.verify.server): the server the options
    already carry (`run_cached` started it early; it ends it), or one that starts when first
    asked, so a run that verifies nothing pays nothing; a context holding None when the run
    verifies no formula."""
    if not options.formulas:
        return contextlib.nullcontext(None)
    if options.sympy is not None:
        return contextlib.nullcontext(options.sympy)
    from coursekit.verify.server import SympyServer

    return SympyServer()


class UnknownFormat(ValueError):
    """An output format no reporter is registered for (a usage error)."""


def _known_format(name: str) -> None:
    """Raise UnknownFormat unless a reporter is registered as `name`. Every path of
    `run_cached` that checks asks this first: the reporters (their models) and the engine (its
    rules) are imported here, together, with the collector paused (`import_paused`)."""
    from coursekit.lazy import import_paused

    import_paused("coursekit.report", "coursekit.engine")
    from coursekit.report import REPORTERS

    if name not in REPORTERS:
        raise UnknownFormat(f"'{name}' is not one of {', '.join(REPORTERS)}")


def run(
    project: Project,
    paths: Sequence[Path],
    output_format: str,
    out: TextIO,
    color: bool = False,
    options: Options | None = None,
    store: ResultStore | None = None,
    tree: KnownTree | None = None,
    loaded: LoadResult | None = None,
) -> int:
    """Load (unless `loaded` is the course already), run the rules, report; the exit code (2
    when a rule crashed)."""
    from dataclasses import replace

    from coursekit.engine import check
    from coursekit.options import Options
    from coursekit.project import relative_paths
    from coursekit.report import REPORTERS, Report
    from coursekit.report.base import printable

    notes: list[str] = []  # rules may append a line for the summary (shared through options)
    options = replace(options or Options(), notes=notes)
    with _sympy_server(options) as server:
        options = replace(options, sympy=server)
        wanted = relative_paths(project.root, paths)
        result = check(project, wanted, options=options, store=store, tree=tree, loaded=loaded)
    counts = {}
    if output_format.startswith("statistics"):
        from coursekit.rules import Context
        from coursekit.rules.coverage import coverage
        from coursekit.store import MemoryStore

        # every chapter's identities settled, not only those of the chapters this run checked
        ctx = Context(result.course, project.config, store or MemoryStore(), options)
        counts = coverage(result.course, ctx)
    report = Report(
        diagnostics=result.diagnostics,
        sources=result.course.texts,
        color=color,
        notes=notes,
        coverage=counts,
    )
    out.write(printable(REPORTERS[output_format](report)))  # valid UTF-8 in every format
    if result.crashed:
        return 2
    return 1 if report.errors else 0
