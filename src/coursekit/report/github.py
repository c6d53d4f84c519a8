"""GitHub Actions workflow commands: one `::error` or `::warning` line per diagnostic.

GitHub turns each line into an annotation on the file and line it names:

    ::error file=course/II/2/chapter.yaml,line=14,col=9,title=CK301 apparatus-unresolved::...

Values are escaped as the runner expects: in the message `%`, CR and LF; in a property value
also `:` and `,` (which would otherwise end the value or the property list).
"""

from __future__ import annotations

from coursekit.diagnostics import Diagnostic
from coursekit.report.base import Report, reporter

_COMMANDS = {"error": "error", "warning": "warning"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic) -> str:
    """The workflow command for one diagnostic."""
    kind = _COMMANDS.get(str(d.severity), "notice")
    title = f"{d.code} {d.name}" if d.name else d.code
    properties = [("file", d.path), ("line", str(d.line)), ("col", str(d.column)), ("title", title)]
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{kind} {rendered}::{escape_data(d.message)}"


@reporter("github")
def render(report: Report) -> str:
    return "".join(command(d) + "\n" for d in report.diagnostics)
