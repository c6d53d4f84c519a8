"""ruff-style text: `path:line:col: CODE message`, the source line, a caret, a summary."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from coursekit.diagnostics import Diagnostic
from coursekit.memo import ByIdentity
from coursekit.report.base import Report, reporter


def _style(text: str, color: bool, **kwargs: object) -> str:
    if not color:
        return text
    import click

    return click.style(text, **kwargs)  # type: ignore[arg-type]


def _block(
    d: Diagnostic, text: str | None, color: bool, lines_of: Callable[[str, str], list[str]]
) -> str:
    """A finding: its head, then (when its line is in its file) the line and a caret under
    its column, then an empty line."""
    head = (
        f"{_style(d.path, color, bold=True)}:{d.line}:{d.column}: "
        f"{_style(d.code, color, fg='red' if d.severity == 'error' else 'yellow', bold=True)} "
        f"{d.message}"
    )
    if d.severity == "warning":
        head += " (warning)"
    if d.fixable:
        head += " [*]"
    out = [head]
    if text is not None:
        lines = lines_of(d.path, text)
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
            out.append(f"{pad} | {' ' * (max(column, 1) - 1)}{_style('^', color, fg='red')}")
    out.append("")
    return "\n".join(out)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# Each finding's lines, by the identity of the diagnostic and equal to its file's text: a
# process that checks again and again (the daemon, the language server) reports mostly the
# diagnostic objects of its last run (the kept per-chapter results).
_BLOCKS: ByIdentity[str] = ByIdentity(200_000)


@reporter("text")
def render(report: Report) -> str:
    out: list[str] = []
    # one file's lines at a time: diagnostics come sorted by file, and keeping the lines of
    # every file with a finding held a second copy of the course (19 MB at 1,000 chapters)
    held: dict[str, list[str]] = {}

    def lines_of(path: str, text: str) -> list[str]:
        if path not in held:
            held.clear()
            held[path] = text.split("\n")
        return held[path]

    for d in report.diagnostics:
        text = report.sources.get(d.path)
        out.append(
            _BLOCKS.get(d, partial(_block, d, text, report.color, lines_of), text, report.color)
        )
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
