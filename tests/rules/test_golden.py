"""The golden course passes every rule: each broken copy differs from it by one small edit."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from coursekit.cli import main
from helpers import GOLDEN, copy_golden, run_check


def test_golden_course_is_clean(tmp_path: Path) -> None:
    assert run_check(copy_golden(tmp_path)) == []


def test_golden_course_check_exits_0() -> None:
    result = CliRunner().invoke(main, ["check", "--course", str(GOLDEN), "--no-exec", "--no-cache"])
    assert result.exit_code == 0, result.output


def test_every_rule_documents_a_failing_and_a_passing_example() -> None:
    from coursekit.rules import REGISTRY

    families = {"notation", "apparatus", "propositions", "references", "quiz", "maturity"}
    mine = [rule for rule in REGISTRY.values() if rule.family in families]
    assert len(mine) == 36  # CK706 published-stub (maturity), CK205 maths-unreadable (notation)
    for rule in mine:
        assert "Fails:" in rule.doc and "Passes:" in rule.doc, rule.code
