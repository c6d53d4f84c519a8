"""SARIF 2.1.0: one run, the tool with every rule and its documentation, one result per finding.

Code scanning services (GitHub's among them) read this. Locations are relative to the project
root under the base id `%SRCROOT%`; columns count Unicode code points, as coursekit's do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from coursekit import DISTRIBUTION, HOMEPAGE, __version__
from coursekit.diagnostics import Diagnostic
from coursekit.report.base import Report, printable, reporter
from coursekit.report.span import end_of

if TYPE_CHECKING:
    from coursekit.rules import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"

_LEVELS = {"error": "error", "warning": "warning"}


def information_uri() -> str:
    """The project's home page from the installed metadata, else the one coursekit knows."""
    try:
        meta = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return HOMEPAGE
    entries: list[str] = [str(e) for e in meta.get_all("Project-URL") or []]
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() in {"homepage", "home", "documentation", "source"} and url:
            return url.strip()
    homes: list[str] = [str(h) for h in meta.get_all("Home-page") or []]
    return homes[0] if homes else HOMEPAGE


def _level(severity: str) -> str:
    return _LEVELS.get(severity, "note")


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    doc = rule.doc or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": doc},
        "help": {"text": doc, "markdown": f"**{rule.title}**\n\n```\n{doc}\n```"},
        "defaultConfiguration": {"level": _level(str(rule.severity))},
        "properties": {"tags": [rule.family]},
    }


def _bare_descriptor(code: str, name: str, severity: str) -> dict[str, Any]:
    """A code that no registered rule documents (should not happen; reported all the same)."""
    return {
        "id": code,
        "name": name or code,
        "shortDescription": {"text": name or code},
        "defaultConfiguration": {"level": _level(severity)},
    }


def _rules(diagnostics: Iterable[Diagnostic]) -> list[dict[str, Any]]:
    from coursekit.rules import REGISTRY  # the rule families load only when SARIF is asked for

    descriptors = [_rule_descriptor(REGISTRY[code]) for code in sorted(REGISTRY)]
    known = set(REGISTRY)
    for d in diagnostics:
        if d.code not in known:
            known.add(d.code)
            descriptors.append(_bare_descriptor(d.code, d.name, str(d.severity)))
    return descriptors


def _artifact(path: str) -> dict[str, str]:
    # A URI percent-encodes the name's bytes, so a name that is not UTF-8 is kept exactly.
    uri = quote(os.fsencode(path))
    if path.startswith("/"):  # outside the project root: an absolute file URI, no base
        return {"uri": "file://" + uri}
    return {"uri": uri, "uriBaseId": SRCROOT}


def _result(d: Diagnostic, index: int, sources: Mapping[str, str]) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(d.path)}
    if d.line >= 1:
        end_line, end_column = end_of(d, sources)
        physical["region"] = {
            "startLine": d.line,
            "startColumn": max(d.column, 1),
            "endLine": end_line,
            "endColumn": max(end_column, d.column, 1),
        }
    return {
        "ruleId": d.code,
        "ruleIndex": index,
        "level": _level(str(d.severity)),
        "message": {"text": d.message},
        "locations": [{"physicalLocation": physical}],
    }


def document(report: Report) -> dict[str, Any]:
    """The SARIF log as a plain mapping."""
    rules = _rules(report.diagnostics)
    index = {descriptor["id"]: i for i, descriptor in enumerate(rules)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "coursekit",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": information_uri(),
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.code], report.sources) for d in report.diagnostics],
            }
        ],
    }


@reporter("sarif")
def render(report: Report) -> str:
    return printable(json.dumps(document(report), indent=2, ensure_ascii=False)) + "\n"
