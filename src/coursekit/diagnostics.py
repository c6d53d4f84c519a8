"""Diagnostics: the one value rules produce and reporters consume."""

from __future__ import annotations

import operator
from dataclasses import fields
from enum import StrEnum

from coursekit.model.base import Location
from coursekit.records import record


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@record(frozen=True, slots=True, order=True)
class Diagnostic:
    path: str
    line: int
    column: int
    code: str
    message: str
    severity: Severity = Severity.ERROR
    name: str = ""
    fixable: bool = False
    # Files the finding depends on besides its own (where a broken reference should have
    # pointed): naming one of them on the command line reports it too.
    related: tuple[str, ...] = ()

    @classmethod
    def at(
        cls,
        location: Location,
        code: str,
        message: str,
        severity: Severity = Severity.ERROR,
        name: str = "",
        fixable: bool = False,
        related: tuple[str, ...] = (),
    ) -> Diagnostic:
        return cls(
            location.path,
            location.line,
            location.column,
            code,
            message,
            severity,
            name,
            fixable,
            related,
        )

    def at_named(self, name: str) -> Diagnostic:
        return Diagnostic(
            self.path,
            self.line,
            self.column,
            self.code,
            self.message,
            self.severity,
            name,
            self.fixable,
            self.related,
        )

    def as_dict(self) -> dict[str, object]:
        """The JSON contract: exactly these keys."""
        return {
            "code": self.code,
            "severity": str(self.severity),
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


def located(d: Diagnostic) -> str:
    """One line, as the text report starts it: `path:line:col: CODE message`."""
    return f"{d.path}:{d.line}:{d.column}: {d.code} {d.message}"


# The order of `Diagnostic`'s fields, which `order=True` compares: as a sort key it compares
# tuples made in C (sorting 4,000 findings with the generated `__lt__` built 85,000 tuples).
ORDER = operator.attrgetter(*(f.name for f in fields(Diagnostic)))
