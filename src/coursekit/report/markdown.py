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


def _mark(ok: bool, draft: bool = False) -> str:
    """✅ done; 🚧 a draft still owes (its check passes: not red); ❌ a published one owes."""
    if ok:
        return "✅"
    return "🚧" if draft else "❌"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _owes_cell(items: int, lessons: int) -> str:
    """One cell for both debts: items (problems, exercises, extra variants) and strand lessons."""
    parts = [_plural(items, "item")] if items else []
    if lessons:
        parts.append(_plural(lessons, "lesson"))
    return ", ".join(parts) or "0"


def owes_phrase(items: int, lessons: int) -> str:
    """'owes 2 items and 23 strand lessons', 'owes nothing': one line, both debts."""
    parts = [_plural(items, "item")] if items else []
    if lessons:
        parts.append(_plural(lessons, "strand lesson"))
    return "owes " + " and ".join(parts) if parts else "owes nothing"


def _draft(chapter: ChapterOwed) -> bool:
    return chapter.status != "published"


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
        f"{_mark(chapter.complete, _draft(chapter))} **{chapter.id}** {_cell(chapter.title)}",
        _maturity(chapter),
        chapter.status,
        f"{strands.written}/{strands.required}",
        f"{chapter.problems.written}/{chapter.problems.required}",
        f"{chapter.variants.written}/{chapter.variants.required}",
        f"{chapter.exercises.written}/{chapter.exercises.required}",
        _owes_cell(chapter.owes, chapter.strands_owed),
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
        f"{_maturity(chapter)} · {chapter.status} · "
        f"**{owes_phrase(chapter.owes, chapter.strands_owed)}**",
        "",
    ]
    draft = _draft(chapter)
    if chapter.owes or chapter.strands_owed:
        lines += ["| | written | required | owed |", "|:--|--:|--:|--:|"]
        rows = [
            *chapter.strands.items(),
            ("problems", chapter.problems),
            ("variants", chapter.variants),
            ("exercises", chapter.exercises),
        ]
        for name, count in rows:
            owed = f"{count.owed}" if count.owed else ""
            lines.append(
                f"| {_mark(count.met, draft)} {name} | {count.written} | {count.required} | {owed} |"
            )
        lines.append("")
    if chapter.planned_apparatus:
        lines += [
            f"{_mark(False, draft)} links apparatus that Book 0 only plans: "
            + ", ".join(f"`{entry}`" for entry in chapter.planned_apparatus),
            "",
        ]
    if chapter.unverified:
        lines += [f"⚠️ {unverified(chapter.unverified)}", ""]
    if chapter.stubs:
        lines += [
            f"{_mark(False, draft)} stubs, owed until written: "
            + ", ".join(f"`{path}`" for path in chapter.stubs),
            "",
        ]
    return lines


def render_owed(owed: CourseOwed, title: str = "") -> str:
    total = owed.total
    strands = _sum(total.strands)
    # Per chapter and strand: a strand written beyond its rung does not pay for another's.
    lessons = sum(chapter.strands_owed for chapter in owed.chapters if chapter.loads)
    lines = [
        f"## Owed content{' · ' + _cell(title) if title else ''}",
        "",
        f"{len(owed.chapters)} chapter{'' if len(owed.chapters) == 1 else 's'} · "
        f"**{owes_phrase(owed.owes, lessons)}** (an item is a problem, an exercise or a "
        "variant beyond the problems) · "
        f"strand lessons {strands.written}/{strands.required} · 🚧 a draft still owes (its check "
        "passes), ❌ fails the check" + (f" · **{owed.caveat()}**" if owed.caveat() else ""),
        "",
        *_failures(owed.failures),
        "| Chapter | Maturity | Status | Lessons | Problems | Variants | Exercises | Owes "
        "| Book 0 |",
        "|:--|:--|:--|--:|--:|--:|--:|--:|:--|",
        *(_summary_row(chapter) for chapter in owed.chapters),
        f"| **Total** | | | {strands.written}/{strands.required} "
        f"| {total.problems.written}/{total.problems.required} "
        f"| {total.variants.written}/{total.variants.required} "
        f"| {total.exercises.written}/{total.exercises.required} "
        f"| **{_owes_cell(owed.owes, lessons)}** "
        f"| {len(total.planned_apparatus) or ''} |",
        "",
    ]
    lines += _coverage_table(owed)
    # A chapter that owes nothing is fully described by its row above.
    for chapter in owed.chapters:
        if not chapter.complete:
            lines += _chapter_table(chapter)
    return "\n".join(lines)


_COVERED = ("numbers", "displays", "orders")


def _coverage_cell(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    if not total:
        return ""
    sure = counts.get("checked", 0) + counts.get("given", 0)
    rest = ", ".join(
        f"{counts[s]} {s}" for s in ("untied", "false", "unreadable") if counts.get(s, 0)
    )
    return f"{sure}/{total}" + (f" ({rest})" if rest else "")


def _coverage_table(owed: CourseOwed) -> list[str]:
    """Per chapter: numbers, displays and orders checked or given, of all the reader sees."""
    rows = [
        f"| {_cell(chapter.id)} | "
        + " | ".join(_coverage_cell(chapter.coverage.get(kind, {})) for kind in _COVERED)
        + " |"
        for chapter in owed.chapters
        if any(sum(chapter.coverage.get(kind, {}).values()) for kind in _COVERED)
    ]
    if not rows:
        return []
    return [
        "Verification coverage: checked or given, of what the reader sees.",
        "",
        "| Chapter | Numbers | Displays | Orders |",
        "|:--|--:|--:|--:|",
        *rows,
        "",
    ]
