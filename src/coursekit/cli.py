"""The command line: parse arguments, call a command, exit with its code. Nothing else."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from coursekit import __version__
from coursekit.config import ConfigError
from coursekit.project import Project, find_project

FORMATS = ["text", "json"]


def _project(course: Path | None, sweep: bool = False) -> Project:
    """The project, after finishing any command that was interrupted there (`coursekit.journal`).

    `sweep` (the commands that write the course) also removes temporary files a killed write
    left in the course tree.
    """
    try:
        project = find_project(Path.cwd(), course)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    from coursekit import journal

    try:
        notes = journal.recover(project.root)
        if sweep:
            notes += [
                f"removed {p} (left by an interrupted write)"
                for p in journal.sweep(project.course_dir)
            ]
    except (journal.JournalError, OSError) as exc:
        click.echo(f"coursekit: {exc}", err=True)
        sys.exit(2)
    for note in notes:
        click.echo(f"coursekit: {note}", err=True)
    return project


def _default_format(project: Project) -> str:
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from coursekit.report import REPORTERS  # imported only here: the warm path needs none

        if "github" in REPORTERS:
            return "github"
    return project.config.output_format or "text"


course_option = click.option(
    "--course",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The course folder (default: found from the working directory).",
)


class _Guarded(click.Group):
    """Turns an unexpected exception into one line and exit 2 (set COURSEKIT_DEBUG for the trace)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            # `coursekit rules | head`: the reader left; say nothing more, like cat does.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except Exception as exc:
            if os.environ.get("COURSEKIT_DEBUG"):
                raise
            click.echo(f"coursekit: internal error: {type(exc).__name__}: {exc}", err=True)
            click.echo("coursekit: this is a bug in coursekit; please report it", err=True)
            ctx.exit(2)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="coursekit")
def main() -> None:
    """Lint, verify and scaffold a multi-book technical course."""


@main.command("check")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--format", "output_format", default=None, help="text | json | github | sarif")
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
    select: str | None,
    ignore: str | None,
    no_exec: bool,
    structural: bool,
    no_cache: bool,
    jobs: int | None,
    course: Path | None,
) -> None:
    """Check the course. PATHS narrow what is reported; every rule still sees the whole tree."""
    project = _project(course)
    if select is not None or ignore is not None:
        from dataclasses import replace

        from coursekit.config import with_selection

        try:
            project = replace(project, config=with_selection(project.config, select, ignore))
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
    chosen = output_format or _default_format(project)
    options: dict[str, object] = {
        "exec": not (no_exec or structural),
        "jobs": jobs or os.cpu_count() or 1,
    }
    if structural:
        options["formulas"] = False
    if sys.stderr.isatty():
        from coursekit.report.progress import TerminalProgress

        options["progress"] = TerminalProgress(sys.stderr)
    from coursekit.commands import check

    color = sys.stdout.isatty()
    try:
        code = check.run_cached(project, paths, chosen, sys.stdout, color, options, not no_cache)
    except check.UnknownFormat as exc:
        raise click.BadParameter(str(exc), param_hint="--format") from None
    sys.exit(code)


@main.command("clean")
@course_option
def clean_command(course: Path | None) -> None:
    """Remove the cache folder (.coursekit_cache/) beside the course."""
    from coursekit import cache

    project = _project(course)
    try:
        removed = cache.clean(project.root)
    except OSError as exc:
        raise click.UsageError(str(exc)) from None
    folder = cache.cache_root(project.root)
    click.echo(f"removed {folder}" if removed else f"no cache at {folder}")


@main.command("owed")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
@click.option("--chapter", "chapters", multiple=True, help="Only this chapter (repeatable).")
@course_option
def owed_command(output_format: str, chapters: tuple[str, ...], course: Path | None) -> None:
    """Report owed content per chapter: written against required by its maturity. Exits 0."""
    from coursekit.commands import owed

    sys.exit(owed.run(_project(course), output_format, chapters, sys.stdout))


@main.command("explain")
@click.argument("code")
def explain_command(code: str) -> None:
    """Print a rule's documentation (by code, prefix or name)."""
    from coursekit.commands import explain

    sys.exit(explain.explain(code, sys.stdout))


@main.command("rules")
def rules_command() -> None:
    """List every rule: code, name, severity, summary."""
    from coursekit.commands import explain

    sys.exit(explain.list_rules(sys.stdout))


@main.command("schema")
@click.option(
    "--check", "check_only", is_flag=True, help="Fail if schemas/ is stale; write nothing."
)
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=None)
def schema_command(check_only: bool, folder: Path | None) -> None:
    """Regenerate the JSON Schemas in schemas/ from the models."""
    from coursekit.commands import schema

    if folder is None:
        try:
            folder = find_project(Path.cwd()).root / "schemas"
        except ConfigError:
            folder = Path("schemas")
    sys.exit(schema.run(folder, check_only, sys.stdout))


@main.command("new")
@click.argument(
    "kind", type=click.Choice(["book", "chapter", "lesson", "problem", "exercise", "apparatus"])
)
@click.option(
    "--title", default=None, help="Title; ids of lessons, problems, exercises derive from it."
)
@click.option("--book", default=None, help="chapter: the book (e.g. II).")
@click.option("--chapter", "chapter_id", default=None, help="lesson/problem/exercise: e.g. II.2.")
@click.option("--area", default=None, help="apparatus: the area (e.g. LA).")
@click.option("--strand", default=None, help="lesson: its strand.")
@click.option(
    "--reading-time", default=10, show_default=True, type=click.IntRange(1), help="lesson: minutes."
)
@click.option("--variant", default=None, help="problem: its variant (default: its id).")
@click.option("--author", "authors", multiple=True, help="chapter: an author (repeatable).")
@click.option(
    "--id",
    "item_id",
    default=None,
    help="The id/slug to use (a planned item's id turns it into a lesson).",
)
@click.option("--summary", default=None, help="book/apparatus: the summary.")
@click.option(
    "--status", default="planned", show_default=True, help="apparatus: planned | written."
)
@click.option("--program", is_flag=True, help="exercise: with a solution.py.")
@click.option("--dry-run", "--diff", "dry_run", is_flag=True, help="Print the diff; write nothing.")
@course_option
def new_command(
    kind: str,
    title: str | None,
    book: str | None,
    chapter_id: str | None,
    area: str | None,
    strand: str | None,
    reading_time: int,
    variant: str | None,
    authors: tuple[str, ...],
    item_id: str | None,
    summary: str | None,
    status: str,
    program: bool,
    dry_run: bool,
    course: Path | None,
) -> None:
    """Scaffold a book, chapter, lesson, problem, exercise or apparatus entry and register it."""
    from coursekit.commands import new

    options = new.NewOptions(
        title=title,
        book=book,
        chapter=chapter_id,
        area=area,
        strand=strand,
        reading_time=reading_time,
        variant=variant,
        authors=list(authors),
        id=item_id,
        summary=summary,
        status=status,
        program=program,
    )
    sys.exit(new.run(_project(course, sweep=True), kind, options, dry_run, sys.stdout))


@main.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff; write nothing.")
@course_option
def fix_command(paths: tuple[Path, ...], show_diff: bool, course: Path | None) -> None:
    """Apply the safe fixes (renumbering, ids derivable from folders); --diff shows them."""
    from coursekit.commands import fix

    sys.exit(fix.run(_project(course, sweep=True), paths, show_diff, sys.stdout))
