"""`[tool.coursekit]`: every key validated; any mistake is a usage error (exit 2)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from coursekit.config import Config, ConfigError, Limits, load_config, parse_config

REPO = Path(__file__).resolve().parent.parent


def test_defaults() -> None:
    assert parse_config({}) == Config()


def test_every_key() -> None:
    config = parse_config(
        {
            "course": "content",
            "select": ["CK1", "id-malformed"],
            "ignore": ["CK110"],
            "per-file-ignores": {"course/I/*": ["CK106"]},
            "output-format": "json",
            "sympy-seconds": 2,
            "limits": {"exec-seconds": 3.5, "exec-memory-mb": 256, "exec-output-kb": 64},
        }
    )
    assert config.course == "content"
    assert config.select == ("CK1", "id-malformed")
    assert config.ignore == ("CK110",)
    assert config.per_file_ignores == {"course/I/*": ("CK106",)}
    assert config.output_format == "json"
    assert config.limits == Limits(
        sympy_seconds=2.0, exec_seconds=3.5, exec_memory_mb=256, exec_output_kb=64
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"selct": ["CK1"]}, "did you mean 'select'"),
        ({"select": "CK1"}, "must be a list"),
        ({"select": ["CK999"]}, "'CK999' matches no rule"),
        ({"ignore": ["no-such-rule"]}, "matches no rule"),
        ({"per-file-ignores": {"x": ["CK9999"]}}, "matches no rule"),
        ({"per-file-ignores": ["x"]}, "must be a table"),
        ({"output-format": "xml"}, "expected one of"),
        ({"sympy-seconds": 0}, "must be positive"),
        ({"exec-seconds": "10"}, "must be a number"),
        ({"exec-memory-mb": True}, "must be a number"),
        ({"exec-memory-mb": 1.5}, "whole number"),
        ({"limits": {"exec-secs": 1}}, "did you mean 'exec-seconds'"),
        ({"exec-seconds": 1, "limits": {"exec-seconds": 2}}, "set twice"),
        ({"course": "/abs"}, "inside the project"),
        ({"course": 3}, "must be a folder"),
    ],
)
def test_mistakes_are_config_errors(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(table)


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.coursekit\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pyproject\.toml"):
        load_config(tmp_path)


def _project(tmp_path: Path, config: str) -> Path:
    shutil.copytree(REPO / "course", tmp_path / "course")
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    return tmp_path


def test_a_config_error_exits_2_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path, '[tool.coursekit]\nignore = ["CK99x"]\n'))
    for command in (["check"], ["fix"], ["new", "book", "--title", "X"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, command
        assert "'CK99x' matches no rule" in result.output


def test_ignore_and_per_file_ignores_apply_to_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, "")
    chapter = root / "course/I/1-sequences/chapter.yaml"
    chapter.write_text(
        chapter.read_text(encoding="utf-8").replace("maturity: M0", "maturity: M9"),
        encoding="utf-8",
    )
    monkeypatch.chdir(root)
    assert "CK111" in CliRunner().invoke(main, ["check"]).output
    (root / "pyproject.toml").write_text(
        '[tool.coursekit.per-file-ignores]\n"course/I/*/chapter.yaml" = ["unknown-name"]\n',
        encoding="utf-8",
    )
    assert "CK111" not in CliRunner().invoke(main, ["check"]).output
    (root / "pyproject.toml").write_text('[tool.coursekit]\nignore = ["CK11"]\n', encoding="utf-8")
    assert "CK111" not in CliRunner().invoke(main, ["check"]).output
