"""One JSON object: the diagnostics and a summary (the contract tests and CI rely on)."""

from __future__ import annotations

import json

from coursekit.report.base import Report, printable, reporter
from coursekit.report.span import end_of


@reporter("json")
def render(report: Report) -> str:
    entries: list[dict[str, object]] = []
    for d in report.diagnostics:
        end_line, end_column = end_of(d, report.sources)
        entries.append(
            {**d.as_dict(), "end_line": end_line, "end_column": end_column, "fixable": d.fixable}
        )
    document = {
        "diagnostics": entries,
        "summary": {"errors": report.errors, "warnings": report.warnings},
    }
    # printable: a file name that is not UTF-8 must not make the whole document invalid UTF-8
    return printable(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
