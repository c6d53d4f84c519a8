"""One JSON object: the diagnostics and a summary (the contract tests and CI rely on)."""

from __future__ import annotations

import json

from coursekit.report.base import Report, reporter


@reporter("json")
def render(report: Report) -> str:
    document = {
        "diagnostics": [d.as_dict() for d in report.diagnostics],
        "summary": {"errors": report.errors, "warnings": report.warnings},
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
