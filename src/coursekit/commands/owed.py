"""`coursekit owed`: per chapter, what is written against what its maturity requires.

A report, not a check: whatever is owed, it exits 0 (`check` is what fails a published chapter
that owes). It exits 1 when part of the course did not load (the counts would be short; each
such chapter is a row that says where it failed), and 2 for a usage error, such as an unknown
`--chapter`, or an `--output-file` that cannot be written (nothing is written then). `--format
html` is the dashboard (`report.html`): its links are relative to where the page is written, so
they work from the output file's folder (from the repository root when it goes to stdout).
Problems count through the same function as CK7xx (`rules.maturity.owed_of`): their
programs run (cached, as in `check`) unless `--no-exec`, and then they are "unverified".
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from coursekit.atomic import atomic_write_text
from coursekit.hints import did_you_mean
from coursekit.owed import ChapterOwed, Count, CourseOwed, known_ids, unverified
from coursekit.project import Project
from coursekit.report.html import render_html
from coursekit.report.markdown import owes_phrase, render_owed

FORMATS = ("text", "markdown", "json", "html")


def run(
    project: Project,
    output_format: str,
    chapters: Sequence[str],
    out: TextIO,
    run_programs: bool = True,
    use_cache: bool = True,
    output_file: Path | None = None,
) -> int:
    if output_format not in FORMATS:
        out.write(f"coursekit owed: --format must be one of {', '.join(FORMATS)}\n")
        return 2
    if output_file is not None and not output_file.parent.is_dir():
        out.write(f"coursekit owed: cannot write {output_file}: no folder {output_file.parent}\n")
        return 2
    if output_file is not None and output_file.is_dir():
        out.write(f"coursekit owed: cannot write {output_file}: it is a folder\n")
        return 2
    from coursekit import cache
    from coursekit.engine import load_context
    from coursekit.options import Options
    from coursekit.rules.maturity import owed_of

    options = Options(exec=run_programs, jobs=os.cpu_count() or 1)
    store = cache.DiskStore(project.root) if use_cache else None
    _, ctx = load_context(project, options, store)
    course = ctx.course
    known = known_ids(course)
    for wanted in chapters:
        if wanted not in known:
            hint = did_you_mean(wanted, known)
            out.write(f"coursekit owed: no chapter '{wanted}'{hint}\n")
            return 2
    owed = owed_of(ctx, list(chapters) or None)
    title = course.manifest.title if course.manifest else ""
    if output_format == "json":
        page = json.dumps(owed.as_dict(), indent=2, ensure_ascii=False) + "\n"
    elif output_format == "markdown":
        page = render_owed(owed, title)
    elif output_format == "html":
        books = {book_id: book.manifest.title for book_id, book in course.books.items()}
        page = render_html(owed, title, books, _prefix(project.root, output_file))
    else:
        page = render_text(owed)
    if output_file is None:
        out.write(page)
    else:
        try:
            atomic_write_text(output_file, page)
        except OSError as exc:
            out.write(f"coursekit owed: cannot write {output_file}: {exc.strerror or exc}\n")
            return 2
    return 1 if owed.incomplete else 0


def _prefix(root: Path, output_file: Path | None) -> str:
    """The relative way from the page's folder to the repository root ("" for stdout)."""
    if output_file is None:
        return ""
    folder = output_file.absolute().parent
    way = os.path.relpath(root.absolute(), folder).replace(os.sep, "/")
    return "" if way == "." else way + "/"


def _rows(chapter: ChapterOwed) -> list[tuple[str, Count]]:
    return [
        *chapter.strands.items(),
        ("problems", chapter.problems),
        ("variants", chapter.variants),
        ("exercises", chapter.exercises),
    ]


def render_text(owed: CourseOwed) -> str:
    out: list[str] = [f"does not load: {failure}" for failure in owed.failures]
    if out:
        out.append("")
    width = max([len(name) for chapter in owed.chapters for name, _ in _rows(chapter)] + [9])
    for chapter in owed.chapters:
        out.append(f"{chapter.id}  {chapter.title}")
        out += [f"  does not load: {failure}" for failure in chapter.failures]
        if not chapter.loads:
            out.append("")
            continue
        maturity = f"{chapter.maturity} {chapter.maturity_name}".strip() or "?"
        # Both debts in one phrase ("owes 0" beside 23 missing lessons read as "done").
        phrase = owes_phrase(chapter.owes, chapter.strands_owed)
        out.append(f"  {maturity} · {chapter.status} · {phrase}")
        out.append(f"  {'':<{width}}  written  required  owed")
        for name, count in _rows(chapter):
            owed_cell = str(count.owed) if count.owed else "-"
            out.append(
                f"  {name:<{width}}  {count.written:>7}  {count.required:>8}  {owed_cell:>4}"
            )
        if chapter.unverified:
            out.append(f"  {unverified(chapter.unverified)}")
        if chapter.planned_apparatus:
            out.append(f"  apparatus only planned: {', '.join(chapter.planned_apparatus)}")
        if chapter.stubs:
            out.append(f"  stubs, owed until written: {', '.join(chapter.stubs)}")
        out.append("")
    total = owed.total
    lessons = Count(0, 0)
    for count in total.strands.values():
        lessons += count
    caveat = owed.caveat()
    short = sum(chapter.strands_owed for chapter in owed.chapters if chapter.loads)
    phrase = owes_phrase(owed.owes, short)
    out.append(
        f"{len(owed.chapters)} chapter{'' if len(owed.chapters) == 1 else 's'} · {phrase} "
        f"(problems {total.problems.written}/{total.problems.required}, "
        f"variants {total.variants.written}/{total.variants.required}, "
        f"exercises {total.exercises.written}/{total.exercises.required}) · "
        f"strand lessons {lessons.written}/{lessons.required}" + (f" · {caveat}" if caveat else "")
    )
    return "\n".join(out) + "\n"
