"""What the command groups share: finding the project (and recovering an interrupted write there),
the default output format, and the `--course` option."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from coursekit.config import ConfigError
from coursekit.project import Project, find_project


def project_for(course: Path | None, sweep: bool = False) -> Project:
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
    from coursekit.cache_files import CACHE_DIR

    # Most runs find no journal: they need not import the writer's machinery (tempfile,
    # secrets) to learn that. The name is journal.JOURNAL's (tests/test_warm_path.py).
    if not sweep and not (project.root / CACHE_DIR / "journal.json").exists():
        return project
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


def default_format(project: Project) -> str:
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
