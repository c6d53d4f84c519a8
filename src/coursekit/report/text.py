"""ruff-style text: `path:line:col: CODE message`, the source line, a caret, a summary."""

from __future__ import annotations

from coursekit.report.base import Report, reporter


def _style(text: str, color: bool, **kwargs: object) -> str:
    if not color:
        return text
    import click

    return click.style(text, **kwargs)  # type: ignore[arg-type]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@reporter("text")
def render(report: Report) -> str:
    out: list[str] = []
    # one file's lines at a time: diagnostics come sorted by file, and keeping the lines of
    # every file with a finding held a second copy of the course (19 MB at 1,000 chapters)
    lines_path, lines = "", [""]
    for d in report.diagnostics:
        head = (
            f"{_style(d.path, report.color, bold=True)}:{d.line}:{d.column}: "
            f"{_style(d.code, report.color, fg='red' if d.severity == 'error' else 'yellow', bold=True)} "
            f"{d.message}"
        )
        if d.severity == "warning":
            head += " (warning)"
        if d.fixable:
            head += " [*]"
        out.append(head)
        text = report.sources.get(d.path)
        if text is not None:
            if d.path != lines_path:
                lines_path, lines = d.path, text.split("\n")
            if 1 <= d.line <= len(lines):
                source_line = lines[d.line - 1].replace("\t", " ")
                if len(source_line) > 160:
                    start = max(0, d.column - 80)
                    source_line = source_line[start : start + 160]
                    column = d.column - start
                else:
                    column = d.column
                gutter = str(d.line)
                pad = " " * len(gutter)
                out.append(f"{pad} |")
                out.append(f"{gutter} | {source_line}")
                out.append(
                    f"{pad} | {' ' * (max(column, 1) - 1)}{_style('^', report.color, fg='red')}"
                )
        out.append("")
    if report.errors or report.warnings:
        fixable = sum(1 for d in report.diagnostics if d.fixable)
        summary = (
            f"Found {_plural(report.errors, 'error')} and {_plural(report.warnings, 'warning')}."
        )
        if fixable:
            summary += f"\n[*] {fixable} fixable with `coursekit fix`."
        out.append(summary)
    else:
        out.append("All checks passed.")
    out.extend(report.notes)
    return "\n".join(out) + "\n"
