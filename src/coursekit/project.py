"""Finding the project (and its course folder) from the working directory, once.

The rule (README, "Which project"): from the working directory upward, the first folder that
holds a `course/` folder (normally with `course/course.yaml`) or a `pyproject.toml` with a
`[tool.coursekit]` table is the project; the search never goes past the root of the git
repository it starts in (the first folder with `.git`). Once found, the project is the answer:
a course.yaml that is missing is a usage error, one that cannot be read is a diagnostic at
course.yaml:1:1, and neither sends the search further up to an enclosing project.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from pathlib import Path

from coursekit.config import Config, ConfigError, load_config
from coursekit.records import record


@record(frozen=True)
class Project:
    root: Path  # paths in diagnostics are relative to this
    course_dir: Path
    config: Config

    def contains(self, path: Path) -> bool:
        """Whether `path`, symbolic links resolved, lies inside the project root."""
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def find_project(start: Path, course: Path | None = None) -> Project:
    """The project `start` belongs to, or `--course DIR`'s (its parent is the root)."""
    if course is not None:
        course_dir = course.absolute()
        if not _exists(course_dir / "course.yaml"):
            raise ConfigError(f"{course}: no course.yaml there")
        root = course_dir.parent
        return Project(root=root, course_dir=course_dir, config=load_config(root))
    start = start.absolute()
    for folder in (start, *start.parents):
        if _is_project(folder):
            config = load_config(folder)
            course_dir = folder / config.course
            if not _exists(course_dir / "course.yaml"):
                raise ConfigError(
                    f"the project at {folder} has no {config.course}/course.yaml "
                    "(a project is the nearest folder with course/ or [tool.coursekit]; "
                    "see the README, 'Which project')"
                )
            return Project(root=folder, course_dir=course_dir, config=config)
        if _exists(folder / ".git"):
            break  # the repository's root: an enclosing folder is another project
    raise ConfigError(
        f"no course found from {start} up to the repository root: expected a folder 'course/' "
        "with course.yaml, or a pyproject.toml with [tool.coursekit] (or pass --course DIR)"
    )


def _is_project(folder: Path) -> bool:
    course = folder / "course"
    return course.is_dir() or _exists(course / "course.yaml") or _declares_coursekit(folder)


def _declares_coursekit(folder: Path) -> bool:
    path = folder / "pyproject.toml"
    if not path.is_file():
        return False
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        # unreadable: it may well declare coursekit; load_config reports it as a usage error
        return True
    tool = data.get("tool")
    return isinstance(tool, dict) and "coursekit" in tool


def _exists(path: Path) -> bool:
    """Whether anything is there: a dangling or looping link, or an unreadable file, counts."""
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def relative_paths(root: Path, paths: Sequence[Path]) -> list[str]:
    """Command-line paths as the engine reports them: project-relative POSIX strings."""
    result: list[str] = []
    for path in paths:
        absolute = path.absolute()
        try:
            result.append(absolute.relative_to(root).as_posix())
        except ValueError:
            result.append(absolute.as_posix())
    return result
