"""`check --statistics`: how many findings per code, most frequent first (like ruff's), and the
verification coverage: per chapter, how many numbers, displays and orders of growth the reader
sees are checked, given, untied, false or unreadable."""

from __future__ import annotations

import json
from collections import Counter

from coursekit.diagnostics import Diagnostic
from coursekit.report.base import Report, reporter


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _rows(report: Report) -> list[dict[str, object]]:
    counts = Counter(d.code for d in report.diagnostics)
    first: dict[str, Diagnostic] = {}
    fixable: Counter[str] = Counter()
    for d in report.diagnostics:
        first.setdefault(d.code, d)
        fixable[d.code] += d.fixable
    return [
        {
            "code": code,
            "name": first[code].name,
            "severity": str(first[code].severity),
            "count": count,
            "fixable": fixable[code],
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


_KINDS = ("numbers", "displays", "orders")
_STATUSES = ("checked", "given", "untied", "false", "unreadable")


def _coverage_lines(report: Report) -> list[str]:
    """One line per chapter and kind that shows anything, with its checked-or-given share."""
    lines: list[str] = []
    for chapter, kinds in report.coverage.items():
        for kind in _KINDS:
            counts = kinds.get(kind, {})
            total = sum(counts.values())
            if not total:
                continue
            sure = counts.get("checked", 0) + counts.get("given", 0)
            parts = ", ".join(f"{counts.get(s, 0)} {s}" for s in _STATUSES if counts.get(s, 0))
            lines.append(
                f"{chapter} {kind}: {sure}/{total} checked or given ({_percent(sure, total)}); {parts}"
            )
    if not lines:
        return []
    return ["Coverage of what the reader sees (numbers, displays, orders of growth):", *lines, ""]


def _percent(part: int, whole: int) -> str:
    # Floor, so that 99.6% never shows as 100%: 100% means every one.
    return f"{part * 100 // whole}%" if whole else "100%"


@reporter("statistics")
def render(report: Report) -> str:
    rows = _rows(report)
    coverage = _coverage_lines(report)
    if not rows:
        return "\n".join([*coverage, "All checks passed."]) + "\n"
    width = max(len(str(row["count"])) for row in rows)
    lines = coverage + [
        f"{row['count']!s:>{width}}\t{row['code']}\t{'[*] ' if row['fixable'] else ''}{row['name']}"
        for row in rows
    ]
    lines.append(
        f"Found {_plural(report.errors, 'error')} and {_plural(report.warnings, 'warning')}."
    )
    return "\n".join(lines) + "\n"


@reporter("statistics-json")
def render_json(report: Report) -> str:
    page = {"codes": _rows(report), "coverage": report.coverage}
    return json.dumps(page, indent=2, ensure_ascii=False) + "\n"
