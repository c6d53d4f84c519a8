"""One JSON object: the diagnostics and a summary (the contract tests and CI rely on)."""

from __future__ import annotations

import json

from coursekit.report.base import Report, printable, reporter


@reporter("json")
def render(report: Report) -> str:
    document = {
        "diagnostics": [d.as_dict() for d in report.diagnostics],
        "summary": {"errors": report.errors, "warnings": report.warnings},
    }
    # printable: a file name that is not UTF-8 must not make the whole document invalid UTF-8
    return printable(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
