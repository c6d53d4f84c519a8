"""Limits in `[tool.coursekit]` are range-checked: a usage error (exit 2) naming the key, never an
OverflowError, and never a limit that silently turns every program into a failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import cli, snapshot


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        ("sympy-seconds = 1e300", "'sympy-seconds' is 1e+300"),
        ("exec-seconds = 1e300", "'exec-seconds' is 1e+300"),
        ("exec-memory-mb = 4611686018427387904", "'exec-memory-mb' is 4611686018427387904"),
        ("sympy-memory-mb = 4611686018427387904", "'sympy-memory-mb' is 4611686018427387904"),
        ("exec-output-kb = 4611686018427387904", "'exec-output-kb' is 4611686018427387904"),
        ("limits.exec-seconds = 1e-9", "'exec-seconds' is 1e-09"),
    ],
)
def test_a_limit_out_of_range_is_a_usage_error(project: Path, setting: str, shown: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.coursekit]\n{setting}\n", encoding="utf-8")
    before = snapshot(project)
    result = cli(project, "check", "--no-cache")
    assert result.code == 2
    assert shown in result.output and "it must be between" in result.output
    assert snapshot(project) == before


def test_the_largest_limits_in_range_still_check_a_course(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.coursekit]\nsympy-seconds = 3600\nexec-seconds = 3600\n"
        "exec-memory-mb = 1048576\nexec-output-kb = 1048576\n",
        encoding="utf-8",
    )
    result = cli(project, "check", "--no-cache")
    assert result.code == 0, result.output


def test_a_5000_digit_number_in_pyproject_is_a_usage_error(project: Path) -> None:
    digits = "1" * 5000
    (project / "pyproject.toml").write_text(
        f"[tool.coursekit]\nexec-seconds = {digits}\n", encoding="utf-8"
    )
    result = cli(project, "check", "--no-cache")
    assert result.code == 2
    assert "pyproject.toml" in result.output
