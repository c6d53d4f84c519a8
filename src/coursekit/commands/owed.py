"""`coursekit owed`: per chapter, what is written against what its maturity requires.

A report, not a check: it exits 0 whatever is owed (`check` is what fails a published chapter
that owes). Exit 1 when course.yaml does not load (its diagnostics are printed), exit 2 for a
usage error, such as an unknown `--chapter`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from coursekit.diagnostics import located
from coursekit.hints import did_you_mean
from coursekit.load import load_course
from coursekit.owed import ChapterOwed, Count, CourseOwed, course_owed
from coursekit.project import Project
from coursekit.report.markdown import render_owed

FORMATS = ("text", "markdown", "json")


def run(project: Project, output_format: str, chapters: Sequence[str], out: TextIO) -> int:
    if output_format not in FORMATS:
        out.write(f"coursekit owed: --format must be one of {', '.join(FORMATS)}\n")
        return 2
    loaded = load_course(project.course_dir, project.root)
    course = loaded.course
    if course.manifest is None:  # no course to report on: say why, at the file
        out.write("".join(f"{located(d)}\n" for d in loaded.diagnostics))
        return 1
    for wanted in chapters:
        if wanted not in course.chapters:
            hint = did_you_mean(wanted, sorted(course.chapters))
            out.write(f"coursekit owed: no chapter '{wanted}'{hint}\n")
            return 2
    owed = course_owed(course, chapter_ids=list(chapters) or None)
    title = course.manifest.title if course.manifest else ""
    if output_format == "json":
        out.write(json.dumps(owed.as_dict(), indent=2, ensure_ascii=False) + "\n")
    elif output_format == "markdown":
        out.write(render_owed(owed, title))
    else:
        out.write(render_text(owed))
    return 0


def _rows(chapter: ChapterOwed) -> list[tuple[str, Count]]:
    return [
        *chapter.strands.items(),
        ("problems", chapter.problems),
        ("variants", chapter.variants),
        ("exercises", chapter.exercises),
    ]


def render_text(owed: CourseOwed) -> str:
    out: list[str] = []
    width = max([len(name) for chapter in owed.chapters for name, _ in _rows(chapter)] + [9])
    for chapter in owed.chapters:
        maturity = f"{chapter.maturity} {chapter.maturity_name}".strip() or "?"
        out.append(f"{chapter.id}  {chapter.title}")
        short = (
            f" · strands short by {chapter.strands_owed} lessons" if chapter.strands_owed else ""
        )
        out.append(f"  {maturity} · {chapter.status} · owes {chapter.owes}{short}")
        out.append(f"  {'':<{width}}  written  required  owed")
        for name, count in _rows(chapter):
            owed_cell = str(count.owed) if count.owed else "-"
            out.append(
                f"  {name:<{width}}  {count.written:>7}  {count.required:>8}  {owed_cell:>4}"
            )
        if chapter.planned_apparatus:
            out.append(f"  apparatus only planned: {', '.join(chapter.planned_apparatus)}")
        out.append("")
    total = owed.total
    lessons = Count(0, 0)
    for count in total.strands.values():
        lessons += count
    out.append(
        f"{len(owed.chapters)} chapter{'' if len(owed.chapters) == 1 else 's'} · owes {owed.owes} "
        f"(problems {total.problems.written}/{total.problems.required}, "
        f"variants {total.variants.written}/{total.variants.required}, "
        f"exercises {total.exercises.written}/{total.exercises.required}) · "
        f"strand lessons {lessons.written}/{lessons.required}"
    )
    return "\n".join(out) + "\n"
