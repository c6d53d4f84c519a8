"""Diagnostics as the editor shows them: the same codes, messages and places as `check`."""

from __future__ import annotations

from lsprotocol import types

from coursekit.diagnostics import Diagnostic, Severity
from coursekit.lsp.positions import span

SOURCE = "coursekit"


def to_lsp(diagnostic: Diagnostic, text: str | None) -> types.Diagnostic:
    line, start, end_line, end = span(text, diagnostic.line, diagnostic.column)
    return types.Diagnostic(
        range=types.Range(types.Position(line, start), types.Position(end_line, end)),
        message=diagnostic.message,
        severity=(
            types.DiagnosticSeverity.Error
            if diagnostic.severity == Severity.ERROR
            else types.DiagnosticSeverity.Warning
        ),
        code=diagnostic.code,
        source=SOURCE,
        # the rule's name and whether `coursekit fix` mends it travel to code actions
        data={"name": diagnostic.name, "fixable": diagnostic.fixable},
    )


def publish_params(
    uri: str, diagnostics: list[Diagnostic], text: str | None, version: int | None = None
) -> types.PublishDiagnosticsParams:
    return types.PublishDiagnosticsParams(
        uri=uri, diagnostics=[to_lsp(d, text) for d in diagnostics], version=version
    )
