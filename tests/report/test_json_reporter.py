"""`--format json`: the contract tests and CI rely on (COURSE-MODEL.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from reporting import copy_course, sample_report

from coursekit.cli import main
from coursekit.report import REPORTERS, Report


def test_contract_keys() -> None:
    report = sample_report()
    document = json.loads(REPORTERS["json"](report))
    assert set(document) == {"diagnostics", "summary"}
    assert document["summary"] == {"errors": 1, "warnings": 1}
    for entry in document["diagnostics"]:
        assert set(entry) == {
            "code",
            "severity",
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "message",
            "fixable",
        }
    assert document["diagnostics"][0] == {
        "code": "CK103",
        "severity": "error",
        "path": "course/II/2-from-recurrence-to-attention/chapter.yaml",
        "line": 3,
        "column": 9,
        "end_line": 3,
        "end_column": 16,  # exclusive: "0.IT.09" spans columns 9..15
        "message": "unknown key 'tittle' (did you mean 'title'?)",
        "fixable": False,
    }
    # Without the source text, the span is empty (end = start).
    assert document["diagnostics"][1]["end_column"] == document["diagnostics"][1]["column"]


def test_empty_report() -> None:
    assert json.loads(REPORTERS["json"](Report(diagnostics=[]))) == {
        "diagnostics": [],
        "summary": {"errors": 0, "warnings": 0},
    }


def test_cli_paths_are_relative_and_positions_one_based(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course_copy = copy_course(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["check", "--format", "json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["summary"]["errors"] >= 1
    for entry in document["diagnostics"]:
        assert not Path(entry["path"]).is_absolute()
        assert (course_copy / entry["path"]).exists()
        assert entry["line"] >= 1 and entry["column"] >= 1
    unknown = [d for d in document["diagnostics"] if d["code"] == "CK103"]
    assert unknown and unknown[0]["path"] == "course/course.yaml"
