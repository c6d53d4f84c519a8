"""The command line: parse arguments, call a command, exit with its code. Nothing else."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import click

from coursekit import __version__
from coursekit.config import ConfigError
from coursekit.project import Project, find_project

# The formats `check --format` offers (coursekit.report registers one reporter for each);
# the names are spelled here so `--help` lists them without importing the reporters.
FORMATS = ["text", "json", "github", "sarif"]


def _project(course: Path | None, sweep: bool = False) -> Project:
    """The project, after finishing any command that was interrupted there (`coursekit.journal`).

    `sweep` (the commands that write the course) also removes temporary files a killed write
    left in the course tree.
    """
    try:
        project = find_project(Path.cwd(), course)
    except ConfigError as exc:
        message = str(exc)
        if course is not None and (course / "course" / "course.yaml").is_file():
            # `--course .` from the repository root: the course is the folder inside it.
            message += f"; did you mean --course {course / 'course'}?"
        raise click.UsageError(message) from None
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


@main.command("init")
@click.argument(
    "directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path)
)
@click.option("--title", default="A new course", show_default=True, help="The course's title.")
@click.option(
    "--hooks-repo",
    default=None,
    metavar="URL",
    help="Where pre-commit and CI fetch coursekit from (default: the placeholder URL "
    "docs/pre-commit.md explains).",
)
def init_command(directory: Path, title: str, hooks_repo: str | None) -> None:
    """Start a course repository in DIRECTORY: course/, schemas/, pre-commit and CI.

    Writes only what is missing; refuses (writing nothing) if a file exists with other content.
    """
    from coursekit.commands import init

    if hooks_repo is None:
        sys.exit(init.run(directory, title, sys.stdout))
    sys.exit(init.run(directory, title, sys.stdout, hooks_repo))


@main.command("check")
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
    project = _project(course)
    from coursekit.commands import check

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
    chosen = output_format or _default_format(project)
    if statistics:
        chosen = "statistics-json" if chosen == "json" else "statistics"
    options: dict[str, object] = {
        "exec": not (no_exec or structural),
        "jobs": jobs or os.cpu_count() or 1,
    }
    if structural:
        options["formulas"] = False
    if sys.stderr.isatty():
        from coursekit.report.progress import TerminalProgress

        options["progress"] = TerminalProgress(sys.stderr)
    if output_file is not None:
        problem = check.report_target_problem(project, output_file)
        if problem is not None:
            raise click.BadParameter(problem, param_hint="--output-file")
    color = output_file is None and sys.stdout.isatty()
    out = io.StringIO() if output_file is not None else sys.stdout
    try:
        code = check.run_cached(project, paths, chosen, out, color, options, not no_cache)
    except check.UnknownFormat as exc:
        raise click.BadParameter(str(exc), param_hint="--format") from None
    if output_file is not None:
        assert isinstance(out, io.StringIO)
        try:
            check.write_report(output_file, out.getvalue())
        except OSError as exc:
            raise click.UsageError(f"{output_file}: cannot write the report: {exc}") from None
    sys.exit(0 if exit_zero and code == 1 else code)


@main.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk LSP on stdin/stdout (the only transport).")
@course_option
def lsp_command(stdio: bool, course: Path | None) -> None:
    """Serve the course to an editor: diagnostics as you type, hover, definition, completion."""
    from coursekit.lsp.server import serve

    serve(course)


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
        _project(course),
        output_format,
        chapters,
        sys.stdout,
        not no_exec,
        not no_cache,
        output_file,
    )
    sys.exit(code)


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
@click.option(
    "--exit-non-zero-on-fix",
    "fail_on_write",
    is_flag=True,
    help="Write what is stale, and exit 1 if anything was written (the pre-commit hook).",
)
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The schemas folder (default: schemas/ beside the course's project root).",
)
def schema_command(check_only: bool, fail_on_write: bool, folder: Path | None) -> None:
    """Regenerate the JSON Schemas in schemas/ from the models."""
    from coursekit.commands import schema

    if folder is None:
        try:
            folder = find_project(Path.cwd()).root / "schemas"
        except ConfigError:
            folder = Path("schemas")
    sys.exit(schema.run(folder, check_only, sys.stdout, fail_on_write))


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
