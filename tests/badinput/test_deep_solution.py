"""A published `solution.value` nested deeper than numpy's dimensions is compared, not crashed on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coursekit.exec.compare import compare

from .conftest import PROBLEM, cli, line_of, replace_in


def nested(depth: int, leaf: Any = 4) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [33, 65, 99])
def test_compare_handles_any_depth_the_loader_lets_through(depth: int) -> None:
    assert compare(nested(depth), nested(depth))
    result = compare(nested(depth), nested(depth, 5))
    assert not result and result.where == (0,) * depth
    assert not compare(nested(depth), 4)


def test_check_reports_a_65_deep_published_value_at_its_line(project: Path) -> None:
    deep = "[" * 65 + "4" + "]" * 65
    replace_in(project / PROBLEM, "value: 4", f"value: {deep}")
    result = cli(project, "check", "--no-cache")
    assert result.code == 1
    assert "CK000" not in result.output
    line = line_of(project / PROBLEM, "value:")
    assert (PROBLEM, line) in {(p, n) for p, n, _ in result.located("CK907")}, result.output
