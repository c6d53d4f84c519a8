"""`--format sarif`: SARIF 2.1.0 that validates against the official schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner
from reporting import copy_course, sample_report

from coursekit import __version__
from coursekit.cli import main
from coursekit.diagnostics import Diagnostic, Severity
from coursekit.report import REPORTERS, Report
from coursekit.rules import REGISTRY

SCHEMA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    if not SCHEMA.is_file():
        pytest.skip(f"the official SARIF 2.1.0 schema is not at {SCHEMA} (shared/data is absent)")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def render(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(REPORTERS["sarif"](report))
    return document


def assert_valid(validator: jsonschema.Draft4Validator, document: dict[str, Any]) -> None:
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_validates_against_the_official_schema(validator: jsonschema.Draft4Validator) -> None:
    report = sample_report()
    assert_valid(validator, render(report))


def test_validates_without_results(validator: jsonschema.Draft4Validator) -> None:
    document = render(Report(diagnostics=[]))
    assert_valid(validator, document)
    assert document["runs"][0]["results"] == []


def test_the_schema_rejects_a_broken_log(validator: jsonschema.Draft4Validator) -> None:
    """The validator is real: a result without a message fails it."""
    document = render(Report(diagnostics=[Diagnostic("a.yaml", 1, 1, "CK101", "m")]))
    del document["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(document))


def test_driver_lists_every_rule_with_its_documentation() -> None:
    report = sample_report()
    driver = render(report)["runs"][0]["tool"]["driver"]
    assert driver["name"] == "coursekit"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == sorted(REGISTRY)
    for descriptor in driver["rules"]:
        rule = REGISTRY[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == rule.doc
        assert descriptor["help"]["text"] == rule.doc
        assert descriptor["defaultConfiguration"]["level"] == str(rule.severity)


def test_results_point_at_their_rule_and_place() -> None:
    report = sample_report()
    run = render(report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    first, second = run["results"]
    assert first["ruleId"] == "CK103"
    assert rules[first["ruleIndex"]]["id"] == "CK103"
    assert first["level"] == "error"
    assert first["message"]["text"] == "unknown key 'tittle' (did you mean 'title'?)"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "course/II/2-from-recurrence-to-attention/chapter.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert location["region"] == {
        "startLine": 3,
        "startColumn": 9,
        "endLine": 3,
        "endColumn": 16,  # exclusive: the value "0.IT.09"
    }
    assert second["level"] == "warning"
    assert rules[second["ruleIndex"]]["id"] == "CK110"


def test_awkward_paths_and_unknown_codes(validator: jsonschema.Draft4Validator) -> None:
    report = Report(
        diagnostics=[
            Diagnostic("course/I/1 sequences/ch#1.yaml", 2, 3, "CK103", "m"),
            Diagnostic("/elsewhere/course.yaml", 1, 1, "CK104", "m"),
            Diagnostic(
                "course/x.md", 1, 1, "CK998", "from a rule not registered", Severity.WARNING
            ),
        ]
    )
    document = render(report)
    assert_valid(validator, document)
    run = document["runs"][0]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert uris[0] == {"uri": "course/I/1%20sequences/ch%231.yaml", "uriBaseId": "%SRCROOT%"}
    assert uris[1] == {"uri": "file:///elsewhere/course.yaml"}
    assert run["tool"]["driver"]["rules"][run["results"][2]["ruleIndex"]]["id"] == "CK998"


def test_cli_output_on_a_broken_course_validates(
    validator: jsonschema.Draft4Validator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_course(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["check", "--format", "sarif"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert_valid(validator, document)
    codes = {r["ruleId"] for r in document["runs"][0]["results"]}
    assert "CK103" in codes
