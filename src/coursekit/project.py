"""Finding the project (and its course folder) from the working directory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coursekit.config import Config, ConfigError, load_config


@dataclass(frozen=True)
class Project:
    root: Path  # paths in diagnostics are relative to this
    course_dir: Path
    config: Config


def find_project(start: Path, course: Path | None = None) -> Project:
    """The nearest ancestor of `start` that holds a course (`course/course.yaml` by default)."""
    if course is not None:
        course_dir = course.absolute()
        if not (course_dir / "course.yaml").is_file():
            raise ConfigError(f"{course}: no course.yaml there")
        root = course_dir.parent
        return Project(root=root, course_dir=course_dir, config=load_config(root))
    start = start.absolute()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file() or (folder / "course" / "course.yaml").is_file():
            config = load_config(folder)
            course_dir = folder / config.course
            if (course_dir / "course.yaml").is_file():
                return Project(root=folder, course_dir=course_dir, config=config)
        if (folder / "course.yaml").is_file() and not (folder.parent / "course.yaml").is_file():
            config = load_config(folder.parent)
            return Project(root=folder.parent, course_dir=folder, config=config)
    raise ConfigError(
        f"no course found from {start}: expected a folder 'course/' with course.yaml "
        "(or pass --course DIR)"
    )


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
