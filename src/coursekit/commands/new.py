"""`coursekit new KIND`: scaffold a book, chapter, lesson, problem, exercise or apparatus entry."""

from __future__ import annotations

from dataclasses import field
from typing import TextIO

from coursekit.authoring.changes import ChangeError
from coursekit.authoring.scaffold import Scaffolder, ScaffoldError
from coursekit.diagnostics import located
from coursekit.load import load_course
from coursekit.project import Project
from coursekit.records import record

KINDS = ("book", "chapter", "lesson", "problem", "exercise", "apparatus")


@record
class NewOptions:
    title: str | None = None
    book: str | None = None
    chapter: str | None = None
    area: str | None = None
    strand: str | None = None
    reading_time: int = 10
    variant: str | None = None
    authors: list[str] = field(default_factory=list)
    id: str | None = None
    summary: str | None = None
    status: str = "planned"
    program: bool = False


def run(project: Project, kind: str, options: NewOptions, dry_run: bool, out: TextIO) -> int:
    """0: done (or shown); 1: a manifest it needs did not load; 2: a usage problem. Only 0
    writes anything, and only inside the project it names."""
    loaded = load_course(project.course_dir, project.root)
    scaffolder = Scaffolder(project.root, project.course_dir, loaded)
    try:
        made = _scaffold(scaffolder, kind, options)
    except ScaffoldError as exc:
        unloaded = loaded.unloaded_manifests()
        if unloaded:  # what `new` looked for may be listed in a file that did not load
            out.write(f"coursekit new {kind}: {exc}; fix what did not load first:\n")
            out.write("".join(f"{located(d)}\n" for d in unloaded))
            return 1
        out.write(f"coursekit new {kind}: {exc}\n")
        return 2
    outside = [c.path for c in scaffolder.changes.effective if not project.contains(c.path)]
    if outside:  # through a symbolic link: the project named below is not where it would land
        out.write(
            f"coursekit new {kind}: {outside[0]} leads outside the project {project.root}; "
            "nothing written\n"
        )
        return 2
    changes = scaffolder.changes
    if dry_run:
        out.write(changes.diff())
        return 0
    try:
        written = changes.apply()
    except (ChangeError, OSError) as exc:
        out.write(f"coursekit new {kind}: {exc}\n")
        return 2
    out.write(f"created {kind} {made} in {project.root}\n")
    for path in written:
        out.write(f"  wrote {changes.rel(path)}\n")
    return 0


def _need(value: str | None, option: str, kind: str) -> str:
    if not value:
        raise ScaffoldError(f"`new {kind}` needs {option}")
    return value


def _scaffold(s: Scaffolder, kind: str, o: NewOptions) -> str:
    if kind == "book":
        return s.new_book(_need(o.title, "--title", kind), o.summary)
    if kind == "chapter":
        return s.new_chapter(
            _need(o.book, "--book", kind), _need(o.title, "--title", kind), o.authors, o.id
        )
    if kind == "lesson":
        chapter = _need(o.chapter, "--chapter", kind)
        return s.new_lesson(chapter, o.title, o.strand, o.reading_time, o.id)
    if kind == "problem":
        return s.new_problem(
            _need(o.chapter, "--chapter", kind), _need(o.title, "--title", kind), o.variant, o.id
        )
    if kind == "exercise":
        return s.new_exercise(
            _need(o.chapter, "--chapter", kind), _need(o.title, "--title", kind), o.program, o.id
        )
    if kind == "apparatus":
        if o.status not in ("planned", "written"):
            raise ScaffoldError("--status is planned or written")
        return s.new_apparatus(
            _need(o.area, "--area", kind), _need(o.title, "--title", kind), o.status, o.summary
        )
    raise ScaffoldError(f"unknown kind '{kind}' (one of {', '.join(KINDS)})")
