"""Owed content as Markdown, fit for a GitHub job summary (`>> $GITHUB_STEP_SUMMARY`).

A course table first (one row per chapter, ✅ when it owes nothing at all: no strand lesson,
problem, variant, exercise, stub, nor a link to a planned Book 0 entry), then a table for each chapter
that owes something, strand by strand, then problems, variants and exercises.
"""

from __future__ import annotations

from coursekit.model.tree import LoadFailure
from coursekit.owed import ChapterOwed, Count, CourseOwed, unverified


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def _sum(counts: dict[str, Count]) -> Count:
    total = Count(0, 0)
    for count in counts.values():
        total += count
    return total


def _maturity(chapter: ChapterOwed) -> str:
    return f"{chapter.maturity} {chapter.maturity_name}".strip() or "?"


def _summary_row(chapter: ChapterOwed) -> str:
    if not chapter.loads:
        return f"| ❌ **{chapter.id}** does not load | | | | | | | ? | |"
    strands = _sum(chapter.strands)
    cells = [
        f"{_mark(chapter.complete)} **{chapter.id}** {_cell(chapter.title)}",
        _maturity(chapter),
        chapter.status,
        f"{strands.written}/{strands.required}",
        f"{chapter.problems.written}/{chapter.problems.required}",
        f"{chapter.variants.written}/{chapter.variants.required}",
        f"{chapter.exercises.written}/{chapter.exercises.required}",
        str(chapter.owes),
        f"{len(chapter.planned_apparatus)} planned" if chapter.planned_apparatus else "",
    ]
    return "| " + " | ".join(cells) + " |"


def _failures(failures: tuple[LoadFailure, ...]) -> list[str]:
    if not failures:
        return []
    return [*(f"- ❌ does not load: `{_cell(str(failure))}`" for failure in failures), ""]


def _chapter_table(chapter: ChapterOwed) -> list[str]:
    if not chapter.loads:
        return [f"### {chapter.id} · does not load", "", *_failures(chapter.failures)]
    lines = [
        f"### {chapter.id} · {_cell(chapter.title)}",
        "",
        *_failures(chapter.failures),
        f"{_maturity(chapter)} · {chapter.status} · **owes {chapter.owes}**"
        + (f" · strands short by {chapter.strands_owed} lessons" if chapter.strands_owed else ""),
        "",
    ]
    if chapter.owes or chapter.strands_owed:
        lines += ["| | written | required | owed |", "|:--|--:|--:|:--|"]
        rows = [
            *chapter.strands.items(),
            ("problems", chapter.problems),
            ("variants", chapter.variants),
            ("exercises", chapter.exercises),
        ]
        for name, count in rows:
            owed = f"{count.owed}" if count.owed else ""
            lines.append(
                f"| {_mark(count.met)} {name} | {count.written} | {count.required} | {owed} |"
            )
        lines.append("")
    if chapter.planned_apparatus:
        lines += [
            "❌ links apparatus that Book 0 only plans: "
            + ", ".join(f"`{entry}`" for entry in chapter.planned_apparatus),
            "",
        ]
    if chapter.unverified:
        lines += [f"⚠️ {unverified(chapter.unverified)}", ""]
    if chapter.stubs:
        lines += [
            "❌ stubs, owed until written: " + ", ".join(f"`{path}`" for path in chapter.stubs),
            "",
        ]
    return lines


def render_owed(owed: CourseOwed, title: str = "") -> str:
    total = owed.total
    strands = _sum(total.strands)
    lines = [
        f"## Owed content{' · ' + _cell(title) if title else ''}",
        "",
        f"{len(owed.chapters)} chapter{'' if len(owed.chapters) == 1 else 's'} · **owes {owed.owes}** "
        "(problems + exercises + variants beyond the problems) · "
        f"strand lessons {strands.written}/{strands.required}"
        + (f" · **{owed.caveat()}**" if owed.caveat() else ""),
        "",
        *_failures(owed.failures),
        "| Chapter | Maturity | Status | Lessons | Problems | Variants | Exercises | Owes "
        "| Book 0 |",
        "|:--|:--|:--|--:|--:|--:|--:|--:|:--|",
        *(_summary_row(chapter) for chapter in owed.chapters),
        f"| **Total** | | | {strands.written}/{strands.required} "
        f"| {total.problems.written}/{total.problems.required} "
        f"| {total.variants.written}/{total.variants.required} "
        f"| {total.exercises.written}/{total.exercises.required} | **{owed.owes}** "
        f"| {len(total.planned_apparatus) or ''} |",
        "",
    ]
    # A chapter that owes nothing is fully described by its row above.
    for chapter in owed.chapters:
        if not chapter.complete:
            lines += _chapter_table(chapter)
    return "\n".join(lines)
