"""`coursekit check` per the contract: exit 0/1/2, text and json, paths narrow what is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit import __version__
from coursekit.cli import main

CHAPTER_FILE = "course/I/1-first/chapter.yaml"


def run(args: list[str], cwd: Path) -> tuple[int, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def break_chapter(course: Path) -> None:
    path = course / "I/1-first/chapter.yaml"
    path.write_text(path.read_text().replace("dek: A dek.", "dek: [unclosed"))


def test_clean_course_exits_0(tiny_course: Path) -> None:
    code, out = run(["check"], tiny_course.parent)
    assert code == 0
    assert out.strip().endswith("All checks passed.")


def test_errors_exit_1_with_ruff_style_text(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    code, out = run(["check"], tiny_course.parent)
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith(f"{CHAPTER_FILE}:5:")
    assert " CK101 " in first
    # the source line, then a caret under the column
    lines = out.splitlines()
    assert lines[2].startswith("5 | problem: A problem.") or lines[2].startswith("5 |")
    caret_line = lines[3]
    column = int(first.split(":")[2])
    assert caret_line.index("^") - caret_line.index("|") - 2 == column - 1
    assert "Found 1 error" in out


def test_json_contract(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    code, out = run(["check", "--format", "json"], tiny_course.parent)
    assert code == 1
    document = json.loads(out)
    assert set(document) == {"diagnostics", "summary"}
    assert document["summary"] == {"errors": 1, "warnings": 0}
    (diagnostic,) = document["diagnostics"]
    assert set(diagnostic) == {
        *("code", "severity", "path", "line", "column", "message"),
        *("end_line", "end_column", "fixable"),
    }
    assert diagnostic["path"] == CHAPTER_FILE
    assert diagnostic["line"] == 5
    assert diagnostic["code"] == "CK101"


def test_paths_narrow_what_is_reported(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    code, out = run(["check", "--format", "json", "course/0/book.yaml"], tiny_course.parent)
    assert (code, json.loads(out)["diagnostics"]) == (0, [])
    code, out = run(["check", "--format", "json", CHAPTER_FILE], tiny_course.parent)
    assert code == 1
    assert len(json.loads(out)["diagnostics"]) == 1


def test_course_found_from_a_subfolder(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    code, out = run(["check", "--format", "json"], tiny_course / "I")
    assert code == 1
    assert json.loads(out)["diagnostics"][0]["path"] == CHAPTER_FILE


@pytest.mark.parametrize(
    "args",
    [["check", "--format", "yaml"], ["check", "--no-such-option"], ["explain", "CK999"]],
)
def test_usage_errors_exit_2(tiny_course: Path, args: list[str]) -> None:
    code, _ = run(args, tiny_course.parent)
    assert code == 2


def test_no_course_is_a_usage_error(tmp_path: Path) -> None:
    code, out = run(["check"], tmp_path)
    assert code == 2
    assert "no course found" in out


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_explain_prints_failing_and_passing_examples() -> None:
    result = CliRunner().invoke(main, ["explain", "CK103"])
    assert result.exit_code == 0
    assert "CK103/unknown-key" in result.output
    assert "Fails:" in result.output and "Passes:" in result.output


def test_explain_by_name() -> None:
    result = CliRunner().invoke(main, ["explain", "yaml-syntax"])
    assert result.exit_code == 0
    assert "CK101" in result.output


def test_every_rule_is_documented_with_examples() -> None:
    from coursekit.rules import REGISTRY

    for rule in REGISTRY.values():
        assert "Fails:" in rule.doc and "Passes:" in rule.doc, rule.code
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0
    for code in REGISTRY:
        assert code in result.output


def test_check_never_modifies_the_tree(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    before = {
        p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tiny_course.rglob("*") if p.is_file()
    }
    run(["check"], tiny_course.parent)
    after = {
        p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tiny_course.rglob("*") if p.is_file()
    }
    assert before == after


def test_a_check_without_formulas_or_problems_imports_neither_sympy_nor_numpy(
    tiny_course: Path,
) -> None:
    probe = (
        "import sys\n"
        "from coursekit.cli import main\n"
        "try:\n"
        "    main(['check', '--no-cache'] if '--no-cache' in sys.argv else ['check'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('sympy' in sys.modules, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tiny_course.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.stdout.strip().splitlines()[-1] == "False False", out.stderr


def test_a_crashing_rule_is_reported_and_exits_2(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.diagnostics import Severity
    from coursekit.rules import REGISTRY
    from coursekit.rules.base import Context, Finding, Rule

    def explode(ctx: Context) -> list[Finding]:
        raise RuntimeError("boom")

    broken = Rule("CK999", "explodes", "test", Severity.ERROR, "x", "x", explode)
    monkeypatch.setitem(REGISTRY, "CK999", broken)
    code, out = run(["check"], tiny_course.parent)
    assert code == 2
    assert "CK000 rule CK999/explodes crashed: RuntimeError: boom" in out
    assert "Traceback" not in out


def test_select_and_ignore_on_the_command_line(tiny_course: Path) -> None:
    chapter = tiny_course / "I/1-first/chapter.yaml"
    chapter.write_text(chapter.read_text().replace("maturity: M0", "maturity: M9"))
    code, out = run(["check", "--format", "json"], tiny_course.parent)
    assert code == 1 and "CK111" in out
    code, out = run(["check", "--format", "json", "--ignore", "unknown-name"], tiny_course.parent)
    assert (code, json.loads(out)["diagnostics"]) == (0, [])
    code, out = run(["check", "--format", "json", "--select", "CK3"], tiny_course.parent)
    assert (code, json.loads(out)["diagnostics"]) == (0, [])
    code, out = run(["check", "--select", "CK999"], tiny_course.parent)
    assert code == 2 and "'CK999' matches no rule" in out


def test_a_file_that_does_not_load_is_reported_whatever_the_selection(tiny_course: Path) -> None:
    break_chapter(tiny_course)
    code, out = run(["check", "--format", "json", "--select", "CK8"], tiny_course.parent)
    assert code == 1
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["CK101"]
