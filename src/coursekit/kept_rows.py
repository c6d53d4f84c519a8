"""The findings a rule made in a chapter as the per-chapter cache keeps them
(`coursekit.incremental`): rows of plain values, and the `Diagnostic`s they stand for; and a
chapter's entry for one set of options, as stored.

While a run plans and runs the rules, a chapter's results are rule code -> [key, rows] (the
key of what the rule read there, and what it found), with `EVERY` -> the key of all its
inputs: the *working* form. Stored so, each of a chapter's ~70 rules was a pair with a key of
its own, though most rules find nothing and those reading the same facts share a key: 4.6 MB
of the pack at 1,000 chapters, ~25 ms of each edit's run to unmarshal and ~10 ms to walk, for
the keys of a chapter whose inputs did not move, which are never asked. The stored form
(`as_stored`) holds:

* `EVERY`: the key of all the entry was written under, as before;
* `SHAPE`: which rules it holds a result of each (a digest of their codes and the facts each
  reads), written only when it holds one of each: with `EVERY` equal, the entry is whole
  (`whole`) and nothing else of it is read but
* `ROWS`: code -> rows, of the rules that found something;
* `KEYS`: each rule's key, as JSON text ({key: [codes]}), parsed only when `EVERY` moved and
  each rule's own key decides (`pairs`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
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


EVERY = ""  # (no rule code is empty)
SHAPE, KEYS, ROWS = "shape", "keys", "rows"


def as_stored(working: dict[str, Any], shape: str, codes: Collection[str]) -> dict[str, Any]:
    """A chapter's results in the working form as its entry stores them: whole (with `SHAPE`)
    when they hold a row for each of the rules `codes` (a rule that crashed keeps none, and
    runs again next time). An entry already stored (taken whole) is returned as it is."""
    if KEYS in working or EVERY not in working:
        return working  # stored, or nothing kept (a chapter whose findings met the clock)
    by_key: dict[str, list[str]] = {}
    rows: dict[str, Any] = {}
    for code, pair in working.items():
        if code != EVERY:
            key, found = pair
            by_key.setdefault(key, []).append(code)
            if found:
                rows[code] = found
    entry = {EVERY: working[EVERY], KEYS: json.dumps(by_key, separators=(",", ":")), ROWS: rows}
    if len(working) == len(codes) + 1 and all(code in working for code in codes):
        entry[SHAPE] = shape
    return entry


def whole(entry: Any, every: str, shape: str) -> list[Diagnostic] | None:
    """What a stored entry found, when it was written whole under the inputs `every` for the
    rules `shape`; else None. Each rule's key is a function of a part of those inputs and an
    entry is written only with rows that hold for them, so each row then holds."""
    if type(entry) is not dict or entry.get(EVERY) != every or entry.get(SHAPE) != shape:
        return None
    rows = entry.get(ROWS)
    if type(rows) is not dict or type(entry.get(KEYS)) is not str:
        return None
    found: list[Diagnostic] = []
    for kept in rows.values():
        decoded_rows = decoded(kept)
        if decoded_rows is None:
            return None
        found += decoded_rows
    return found


def pairs(entry: Any) -> dict[str, list[Any]]:
    """A stored entry's results in the working form, rule code -> [key, rows]; {} for what
    is not such an entry."""
    if type(entry) is not dict or type(entry.get(ROWS)) is not dict:
        return {}
    try:
        by_key = json.loads(entry[KEYS])
    except (KeyError, TypeError, ValueError):
        return {}
    rows = entry[ROWS]
    found: dict[str, list[Any]] = {}
    if type(by_key) is not dict:
        return {}
    for key, codes in by_key.items():
        if type(codes) is not list:
            return {}
        for code in codes:
            if type(code) is str:
                found[code] = [key, rows.get(code, NO_ROWS)]
    return found
