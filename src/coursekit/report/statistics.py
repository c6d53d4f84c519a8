"""`check --statistics`: how many findings per code, most frequent first (like ruff's)."""

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


@reporter("statistics")
def render(report: Report) -> str:
    rows = _rows(report)
    if not rows:
        return "All checks passed.\n"
    width = max(len(str(row["count"])) for row in rows)
    lines = [
        f"{row['count']!s:>{width}}\t{row['code']}\t{'[*] ' if row['fixable'] else ''}{row['name']}"
        for row in rows
    ]
    lines.append(
        f"Found {_plural(report.errors, 'error')} and {_plural(report.warnings, 'warning')}."
    )
    return "\n".join(lines) + "\n"


@reporter("statistics-json")
def render_json(report: Report) -> str:
    return json.dumps(_rows(report), indent=2, ensure_ascii=False) + "\n"
