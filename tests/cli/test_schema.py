"""`coursekit schema`: the published hook writes what is stale and fails only when it wrote."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from coursekit import schemas
from coursekit.cli import main


def test_the_hook_mode_writes_missing_schemas_and_fails_once(tmp_path: Path) -> None:
    folder = tmp_path / "schemas"
    first = CliRunner().invoke(main, ["schema", "--exit-non-zero-on-fix", "--dir", str(folder)])
    assert first.exit_code == 1
    assert "stage the schemas written" in first.output
    assert schemas.stale(folder) == []
    again = CliRunner().invoke(main, ["schema", "--exit-non-zero-on-fix", "--dir", str(folder)])
    assert again.exit_code == 0, again.output
    assert "already up to date" in again.output


def test_check_advice_can_be_followed_where_coursekit_is_only_a_hook(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "--check", "--dir", str(tmp_path / "schemas")])
    assert result.exit_code == 1
    assert "pre-commit run coursekit-schema --all-files" in result.output
    assert not (tmp_path / "schemas").exists()


def test_every_schema_option_has_help() -> None:
    result = CliRunner().invoke(main, ["schema", "--help"])
    assert result.exit_code == 0
    for option in ("--check", "--exit-non-zero-on-fix", "--dir"):
        line = next(x for x in result.output.splitlines() if x.strip().startswith(option))
        assert len(line.split(maxsplit=2)) == 3 or "DIRECTORY" in line, line
    assert "schemas folder" in result.output
