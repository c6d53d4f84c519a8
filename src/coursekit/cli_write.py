"""The commands that write the course or the repository: init, new, fix, schema."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from coursekit.cli_common import course_option, project_for
from coursekit.config import ConfigError
from coursekit.project import find_project


@click.command("init")
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


@click.command("new")
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
    sys.exit(new.run(project_for(course, sweep=True), kind, options, dry_run, sys.stdout))


@click.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a diff; write nothing.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write .coursekit_cache/.")
@course_option
def fix_command(
    paths: tuple[Path, ...], show_diff: bool, no_cache: bool, course: Path | None
) -> None:
    """Apply the safe fixes (renumbering, ids derivable from folders); --diff shows them."""
    from coursekit.commands import fix

    project = project_for(course, sweep=True)
    sys.exit(fix.run(project, paths, show_diff, sys.stdout, use_cache=not no_cache))


@click.command("schema")
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
