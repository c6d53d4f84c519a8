"""The commands that read the course and the rule catalogue: check, owed, clean, lsp, explain, rules."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import click

from coursekit.cli_common import course_option, default_format, project_for
from coursekit.config import ConfigError

# The formats `check --format` offers (coursekit.report registers one reporter for each);
# the names are spelled here so `--help` lists them without importing the reporters.
FORMATS = ["text", "json", "github", "sarif"]


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format (default: text; github under GitHub Actions; or pyproject's setting).",
)
@click.option(
    "--statistics",
    is_flag=True,
    help="Print the number of findings per code instead of each finding (json with --format json).",
)
@click.option(
    "--exit-zero", is_flag=True, help="Exit 0 even when errors are found (2 still means a failure)."
)
@click.option(
    "--output-file",
    "-o",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the report to this file instead of standard output.",
)
@click.option(
    "--select", default=None, help="Only these rules: codes, prefixes or names (CK3,CK801)."
)
@click.option("--ignore", default=None, help="Skip these rules too: codes, prefixes or names.")
@click.option("--no-exec", is_flag=True, help="Do not run worked-problem programs.")
@click.option(
    "--structural",
    is_flag=True,
    help="Skip the expensive families: no sympy verification, no program runs.",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write .coursekit_cache/.")
@click.option(
    "--changed",
    is_flag=True,
    help="PATHS are a change's files (the pre-commit hook): also report what the course files "
    "git says it deletes or renames away broke; exit 0 when the course did not change.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Parallel workers (default: cores).",
)
@course_option
def check_command(
    paths: tuple[Path, ...],
    output_format: str | None,
    statistics: bool,
    exit_zero: bool,
    output_file: Path | None,
    select: str | None,
    ignore: str | None,
    no_exec: bool,
    structural: bool,
    no_cache: bool,
    changed: bool,
    jobs: int | None,
    course: Path | None,
) -> None:
    """Check the course. PATHS narrow what is reported; every rule still sees the whole tree."""
    project = project_for(course)
    from coursekit.commands import check

    named = len(paths)
    if changed:
        narrowed = check.changed_paths(project, paths, sys.stderr)
        if narrowed is None:
            sys.exit(0)  # nothing in the course changed: nothing it could break
        paths = tuple(narrowed)
    elif paths:
        inside = check.course_paths(project, paths, sys.stderr)
        if not inside:
            sys.exit(2)  # every path is outside the course: nothing would be checked
        paths = tuple(inside)
    if select is not None or ignore is not None:
        from dataclasses import replace

        from coursekit.config import with_selection

        try:
            project = replace(project, config=with_selection(project.config, select, ignore))
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
    chosen = output_format or default_format(project)
    if statistics:
        chosen = "statistics-json" if chosen == "json" else "statistics"
    from coursekit.options import Options

    progress = None
    if sys.stderr.isatty():
        from coursekit.report.progress import TerminalProgress

        progress = TerminalProgress(sys.stderr)
    options = Options(
        exec=not (no_exec or structural),
        formulas=not structural,
        jobs=jobs or os.cpu_count() or 1,
        progress=progress,
    )
    if output_file is not None:
        problem = check.report_target_problem(project, output_file)
        if problem is not None:
            raise click.BadParameter(problem, param_hint="--output-file")
    color = output_file is None and sys.stdout.isatty()
    out = io.StringIO() if output_file is not None else sys.stdout
    recorder = None
    if not changed and output_file is None and len(paths) == named:
        # the warm path may replay this command line: it printed nothing but its report
        from coursekit.cache_warm import Recorder

        recorder = Recorder(project, course is not None, paths, exit_zero)
    try:
        code = check.run_cached(
            project, paths, chosen, out, color, options, not no_cache, settled=recorder
        )
    except check.UnknownFormat as exc:
        raise click.BadParameter(str(exc), param_hint="--format") from None
    if output_file is not None:
        assert isinstance(out, io.StringIO)
        try:
            check.write_report(output_file, out.getvalue())
        except OSError as exc:
            raise click.UsageError(f"{output_file}: cannot write the report: {exc}") from None
    sys.exit(0 if exit_zero and code == 1 else code)


@click.command("owed")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json", "html"]),
    default="text",
    show_default=True,
    help="html: a self-contained dashboard page.",
)
@click.option(
    "--output-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the report here (atomically) instead of to stdout.",
)
@click.option("--chapter", "chapters", multiple=True, help="Only this chapter (repeatable).")
@click.option(
    "--no-exec", is_flag=True, help="Do not run problem programs: count them as unverified."
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write .coursekit_cache/.")
@course_option
def owed_command(
    output_format: str,
    output_file: Path | None,
    chapters: tuple[str, ...],
    no_exec: bool,
    no_cache: bool,
    course: Path | None,
) -> None:
    """Report owed content per chapter, written against required by its maturity.

    Exits 0 whatever is owed; 1 when part of the course does not load (its rows say where).
    """
    from coursekit.commands import owed

    code = owed.run(
        project_for(course),
        output_format,
        chapters,
        sys.stdout,
        not no_exec,
        not no_cache,
        output_file,
    )
    sys.exit(code)


@click.command("clean")
@course_option
def clean_command(course: Path | None) -> None:
    """Remove the cache folder (.coursekit_cache/) beside the course."""
    from coursekit import cache

    project = project_for(course)
    try:
        removed = cache.clean(project.root)
    except OSError as exc:
        raise click.UsageError(str(exc)) from None
    folder = cache.cache_root(project.root)
    click.echo(f"removed {folder}" if removed else f"no cache at {folder}")


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk LSP on stdin/stdout (the only transport).")
@course_option
def lsp_command(stdio: bool, course: Path | None) -> None:
    """Serve the course to an editor: diagnostics as you type, hover, definition, completion."""
    from coursekit.lsp.server import serve

    serve(course)


@click.command("explain")
@click.argument("code")
def explain_command(code: str) -> None:
    """Print a rule's documentation (by code, prefix or name)."""
    from coursekit.commands import explain

    sys.exit(explain.explain(code, sys.stdout))


@click.command("rules")
def rules_command() -> None:
    """List every rule: code, name, severity, summary."""
    from coursekit.commands import explain

    sys.exit(explain.list_rules(sys.stdout))


@click.group("daemon")
def daemon_command() -> None:
    """Keep a `check` loaded between runs: an edit then costs what it touches."""


@daemon_command.command(
    "start", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--idle-minutes",
    type=click.FloatRange(min=0, min_open=True),
    default=180.0,
    show_default=True,
    help="Exit after this long without a request.",
)
@click.argument("check_args", nargs=-1, type=click.UNPROCESSED)
def daemon_start_command(idle_minutes: float, check_args: tuple[str, ...]) -> None:
    """Answer `coursekit check CHECK_ARGS`, run from here as this shell runs it, from a course
    kept loaded (the first check runs now)."""
    from coursekit import warm
    from coursekit.commands import daemon

    course = warm.course_argument(list(check_args))
    project = project_for(Path(course) if course else None)
    sys.exit(daemon.start(project, list(check_args), idle_minutes, sys.stdout, sys.stderr))


@daemon_command.command("stop")
@course_option
def daemon_stop_command(course: Path | None) -> None:
    """End every daemon of the project."""
    from coursekit.commands import daemon

    sys.exit(daemon.stop(project_for(course), sys.stdout))


@daemon_command.command("status")
@course_option
def daemon_status_command(course: Path | None) -> None:
    """List the project's daemons: what each answers, since when, how often."""
    from coursekit.commands import daemon

    sys.exit(daemon.status(project_for(course), sys.stdout))
