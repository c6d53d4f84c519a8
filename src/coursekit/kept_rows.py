"""The findings a rule made in a chapter as the per-chapter cache keeps them
(`coursekit.incremental`): rows of plain values, and the `Diagnostic`s they stand for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coursekit.diagnostics import Diagnostic, Severity
from coursekit.memo import ByIdentity

# What most (rule, chapter) pairs keep: no finding. One list, shared, and only ever read (at
# 1,000 chapters ~66,000 of the ~73,000 pairs kept an empty list each, ~4 MB of a cold run).
NO_ROWS: list[list[Any]] = []


def encode(found: Iterable[Diagnostic]) -> list[list[Any]]:
    """The findings as rows of plain values (marshal's and JSON's types alike)."""
    rows = [
        [
            d.path,
            d.line,
            d.column,
            d.code,
            d.message,
            str(d.severity),
            d.name,
            d.fixable,
            [*d.related],
        ]
        for d in found
    ]
    return rows or NO_ROWS


# Rows already decoded, by the identity of the stored value: a process that checks again and
# again (the language server, the daemon) keeps its store in memory, where a kept entry is the
# same object.
_DECODED: ByIdentity[list[Diagnostic] | None] = ByIdentity(100_000)


# What most (rule, chapter) pairs keep: no finding. Shared, and only ever read.
_NOTHING: list[Diagnostic] = []


def decoded(rows: Any) -> list[Diagnostic] | None:
    """The findings kept rows stand for (`encode`'s), or None when they are not such rows."""
    if rows == []:  # ~90% of the pairs at 1,000 chapters: no lookup, nothing remembered
        return _NOTHING
    return _DECODED.get(rows, lambda: _decode(rows))


_SEVERITIES = {str(severity): severity for severity in Severity}


def _decode(rows: Any) -> list[Diagnostic] | None:
    """The kept findings, or None when the entry is not what `encode` wrote."""
    if not isinstance(rows, list):
        return None
    # Rows as `encode` wrote them (marshal and JSON give them back so) are taken as they are:
    # converting each field was ~40% of decoding the 4,001 findings of 1,000 chapters.
    found: list[Diagnostic] = []
    for row in rows:
        if not (type(row) is list and len(row) == 9):
            return _converted(rows)
        path, line, column, code, message, severity, name, fixable, related = row
        if not (
            type(path) is str
            and type(line) is int
            and type(column) is int
            and type(code) is str
            and type(message) is str
            and type(severity) is str
            and severity in _SEVERITIES
            and type(name) is str
            and type(fixable) is bool
            and type(related) is list
            and (not related or all(type(r) is str for r in related))
        ):
            return _converted(rows)
        level = _SEVERITIES[severity]
        found.append(
            Diagnostic(path, line, column, code, message, level, name, fixable, tuple(related))
        )
    return found


def _converted(rows: list[Any]) -> list[Diagnostic] | None:
    """`_decode` of rows of other types, each field converted (None: one cannot be)."""
    try:
        return [
            Diagnostic(
                str(path),
                int(line),
                int(column),
                str(code),
                str(message),
                Severity(severity),
                str(name),
                bool(fixable),
                tuple(str(r) for r in related),
            )
            for path, line, column, code, message, severity, name, fixable, related in rows
        ]
    except (TypeError, ValueError):
        return None
