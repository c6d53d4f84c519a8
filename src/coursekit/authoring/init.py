"""`coursekit init [DIR]`: a new course repository that passes `check` at once.

The course is built by the same authoring code as `coursekit new` (a chapter outline through
`Scaffolder.new_chapter`), first in a scratch folder; then the plan is compared with DIR.
A file already there with the same content is left alone (a second `init` changes nothing);
one with other content stops the whole run before anything is written (nothing is overwritten).
`.gitignore` is the one file extended rather than replaced: the cache line is appended.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import field
from importlib import resources
from pathlib import Path

from coursekit import __version__
from coursekit.atomic import atomic_write_text
from coursekit.records import record

CACHE_LINE = ".coursekit_cache/"
_URL = re.compile(r"^[\w.~:/@%+=-]+$")
# Where pre-commit clones the hooks from: no public URL exists yet (docs/pre-commit.md).
HOOKS_REPOSITORY = "https://coursekit-lint.invalid/coursekit.git"


class InitError(Exception):
    """init cannot go ahead (files in the way, a bad folder): nothing was written."""


@record
class Plan:
    files: dict[str, str] = field(default_factory=dict)  # relative path -> content

    def add(self, relative: str, text: str) -> None:
        self.files[relative] = text


def _template(name: str) -> str:
    return (resources.files("coursekit.authoring") / "templates" / name).read_text(encoding="utf-8")


def plan(title: str, hooks_repository: str = HOOKS_REPOSITORY) -> Plan:
    """Every file `init` writes, built in a scratch folder by the authoring code."""
    if not title.strip() or "\n" in title:
        raise InitError(f"--title {title!r}: a course needs a title on one line")
    if not _URL.match(hooks_repository):
        # It lands unquoted in YAML and inside a shell word in the workflow.
        raise InitError(
            f"--hooks-repo {hooks_repository!r}: expected a URL or path (letters, digits and "
            "._~:/@%+=- only)"
        )
    from coursekit import schemas
    from coursekit.authoring.scaffold import Scaffolder
    from coursekit.authoring.yamledit import render_scalar
    from coursekit.load import load_course

    result = Plan()
    with tempfile.TemporaryDirectory(prefix="coursekit-init-") as scratch:
        root = Path(scratch)
        course = root / "course"
        seeds = {
            "course/course.yaml": _template("course.yaml").replace("{title}", render_scalar(title)),
            "course/0/book.yaml": _template("book0.yaml"),
            "course/I/book.yaml": _template("book.yaml"),
        }
        for relative, text in seeds.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text, encoding="utf-8")
        scaffolder = Scaffolder(root, course, load_course(course, root))
        scaffolder.new_chapter("I", "First steps", ["The authors"])
        scaffolder.changes.apply()
        for path in sorted(course.rglob("*")):
            if path.is_file():
                result.add(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))
    for name, content in schemas.rendered().items():
        result.add(f"schemas/{name}", content)
    result.add(
        ".pre-commit-config.yaml",
        _template("pre-commit-config.yaml")
        .replace("{repository}", hooks_repository)
        .replace("{rev}", f"v{__version__}"),
    )
    result.add(
        ".github/workflows/course.yml",
        _template("course.yml")
        .replace("{repository}", hooks_repository)
        .replace("{rev}", f"v{__version__}"),
    )
    return result


@record
class Outcome:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def apply(target: Path, planned: Plan) -> Outcome:
    """Write what is missing; raise InitError (writing nothing) if a file differs."""
    if target.exists() and not target.is_dir():
        raise InitError(f"{target}: not a folder")
    outcome = Outcome()
    conflicts: list[str] = []
    missing: dict[str, str] = {}
    for relative, text in planned.files.items():
        path = target / relative
        if path.is_dir():
            conflicts.append(f"{relative} (a folder)")
        elif path.exists():
            try:
                same = path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                same = False
            if same:
                outcome.unchanged.append(relative)
            else:
                conflicts.append(relative)
        else:
            missing[relative] = text
    if conflicts:
        raise InitError(
            "these files exist with other content; init overwrites nothing: " + ", ".join(conflicts)
        )
    gitignore = target / ".gitignore"
    ignored = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
    needs_ignore = CACHE_LINE not in ignored.split()
    for relative, text in missing.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        outcome.written.append(relative)
    if needs_ignore:
        separator = "" if not ignored or ignored.endswith("\n") else "\n"
        atomic_write_text(gitignore, f"{ignored}{separator}{CACHE_LINE}\n")
        outcome.written.append(".gitignore")
    else:
        outcome.unchanged.append(".gitignore")
    return outcome
