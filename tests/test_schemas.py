"""schemas/ is generated from the models, in the draft yaml-language-server reads."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conftest import REPO
from coursekit import schemas
from coursekit.cli import main


def test_committed_schemas_are_current() -> None:
    assert schemas.stale(REPO / "schemas") == [], "run `coursekit schema`"


def test_schemas_are_draft_7_without_defs() -> None:
    for name, text in schemas.rendered().items():
        document = json.loads(text)
        assert document["$schema"] == "http://json-schema.org/draft-07/schema#", name
        assert "$defs" not in text, name
        assert document.get("additionalProperties") is False, name


def test_schema_check_fails_when_stale_and_regenerates(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["schema", "--check", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "stale or missing" in result.output
    assert runner.invoke(main, ["schema", "--dir", str(tmp_path)]).exit_code == 0
    assert runner.invoke(main, ["schema", "--check", "--dir", str(tmp_path)]).exit_code == 0


def test_every_course_yaml_carries_a_modeline_that_resolves() -> None:
    yaml_files = sorted((REPO / "course").rglob("*.yaml"))
    assert yaml_files
    for path in yaml_files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        target = (path.parent / first.split("$schema=", 1)[1].strip()).resolve()
        assert target.is_file(), f"{path}: {target}"
