"""What a commit changed in the course, for the pre-commit hook (`coursekit check --changed`).

pre-commit passes a hook the staged files that exist, so a deletion passes nothing and a rename
passes only the new name: a hook that reports on its file arguments alone lets `git rm` or
`git mv` of a listed lesson through while the manifest that lists it is now broken. So the hook
also asks git which course files the change deletes (a rename counts as a deletion of its old
name) and reports on each deleted path and on the manifest that lists it (the nearest
`problem.yaml`, `exercise.yaml`, `chapter.yaml`, `book.yaml` or `course.yaml` above it), where the
missing-file findings sit. Every rule still runs over the whole tree; only reporting is narrowed.

The change is the index against HEAD (a commit), or PRE_COMMIT_FROM_REF...PRE_COMMIT_TO_REF when
pre-commit runs over a range (pre-push, `pre-commit run --from-ref/--to-ref`). Only the standard
library is imported: this runs before the warm path replays a stored result.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

#: The manifests a course file can be listed in, nearest first within one folder.
MANIFESTS = ("problem.yaml", "exercise.yaml", "chapter.yaml", "book.yaml", "course.yaml")
GIT_SECONDS = 30


class GitUnavailable(Exception):
    """git could not say what the change deletes (not a repository, no git, a bad ref)."""


def _git_deleted(course_dir: Path) -> list[str]:
    """Course-relative paths that the change deletes, as git reports them."""
    from_ref = os.environ.get("PRE_COMMIT_FROM_REF")
    to_ref = os.environ.get("PRE_COMMIT_TO_REF")
    changes = [f"{from_ref}...{to_ref}"] if from_ref and to_ref else ["--cached"]
    # --relative: paths relative to (and limited to) the course folder; --no-renames: a rename
    # is its old name deleted plus its new name added.
    command = [
        "git",
        "-C",
        str(course_dir),
        "diff",
        "--name-only",
        "--no-renames",
        "--diff-filter=D",
        "--relative",
        "-z",
        *changes,
        "--",
    ]
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitUnavailable(str(exc)) from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitUnavailable(message[-1] if message else f"git exited {result.returncode}")
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [name for name in names if name]


def listing_manifest(course_dir: Path, deleted: Path) -> Path | None:
    """The nearest manifest above a deleted path, inside the course folder."""
    course_dir = course_dir.absolute()
    for folder in deleted.absolute().parents:
        if folder != course_dir and course_dir not in folder.parents:
            return None
        for name in MANIFESTS:
            if (folder / name).is_file():
                return folder / name
    return None


def deleted_targets(course_dir: Path) -> list[Path]:
    """The deleted course files and the manifests that list them, to narrow reporting to.

    Raises GitUnavailable when git cannot tell (the caller then reports the whole course).
    """
    targets: list[Path] = []
    for name in _git_deleted(course_dir):
        deleted = course_dir / name
        targets.append(deleted)
        manifest = listing_manifest(course_dir, deleted)
        if manifest is not None and manifest not in targets:
            targets.append(manifest)
    return targets


def in_course(course_dir: Path, paths: Sequence[Path]) -> list[Path]:
    """The given paths that lie in the course folder (the others cannot narrow anything)."""
    course_dir = course_dir.absolute()
    return [p for p in paths if p.absolute() == course_dir or course_dir in p.absolute().parents]
