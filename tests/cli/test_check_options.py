"""ruff-level options of `coursekit check`: formats in help, statistics, exit-zero, output file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import FORMATS, main
from coursekit.hints import one_of
from coursekit.report import REPORTERS


def invoke(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def broken(course: Path) -> None:
    """Two unknown keys and a wrong status: three findings, two codes."""
    path = course / "I/1-first/chapter.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "status: publishd\nbogus: 1\nbogus2: 2\n", encoding="utf-8")


def test_help_lists_the_format_choices_and_every_reporter_is_offered() -> None:
    result = CliRunner().invoke(main, ["check", "--help"])
    assert "[text|json|github|sarif]" in result.output
    assert set(FORMATS) <= set(REPORTERS)
    assert {name for name in REPORTERS if not name.startswith("statistics")} == set(FORMATS)


def test_an_unknown_format_is_a_usage_error(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = invoke(["check", "--format", "xml"], tiny_course.parent, monkeypatch)
    assert code == 2
    assert "'xml' is not one of" in err


def test_statistics_count_per_code(tiny_course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken(tiny_course)
    code, out, _ = invoke(["check", "--statistics", "--no-cache"], tiny_course.parent, monkeypatch)
    assert code == 1
    rows = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert rows[0][:2] == ["2", "CK103"], out
    assert rows[1][:2] == ["1", "CK104"], out
    assert "chapter.yaml" not in out  # counts, not findings
    assert out.splitlines()[-1] == "Found 3 errors and 0 warnings."
    code, out, _ = invoke(
        ["check", "--statistics", "--format", "json", "--no-cache"], tiny_course.parent, monkeypatch
    )
    counts = {row["code"]: row["count"] for row in json.loads(out)["codes"]}
    assert counts == {"CK103": 2, "CK104": 1}


def test_exit_zero_keeps_the_report(tiny_course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken(tiny_course)
    code, out, _ = invoke(["check", "--exit-zero", "--no-cache"], tiny_course.parent, monkeypatch)
    assert code == 0
    assert "CK103" in out


def test_output_file_receives_the_report(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken(tiny_course)
    target = tiny_course.parent / "report.json"
    code, out, _ = invoke(
        ["check", "--format", "json", "--output-file", str(target)], tiny_course.parent, monkeypatch
    )
    assert code == 1
    assert out == ""
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["summary"]["errors"] == 3
    # The same from the run cache: the stored output goes to the file too.
    target.unlink()
    code, out, _ = invoke(
        ["check", "--format", "json", "-o", str(target)], tiny_course.parent, monkeypatch
    )
    assert (code, out) == (1, "")
    assert json.loads(target.read_text(encoding="utf-8")) == document


def test_an_unwritable_output_file_is_a_usage_error(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tiny_course.parent / "missing-folder" / "report.txt"
    code, _, err = invoke(["check", "-o", str(target)], tiny_course.parent, monkeypatch)
    assert code == 2
    assert "cannot write the report" in err
    assert not target.parent.exists()


def test_an_output_file_inside_the_course_is_refused(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tiny_course / "I/1-first/lessons/intro.md"
    before = target.read_bytes()
    code, _, err = invoke(["check", "-o", str(target)], tiny_course.parent, monkeypatch)
    assert code == 2
    assert "inside the course folder" in err
    assert target.read_bytes() == before


def test_paths_outside_the_course_match_nothing(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = tiny_course.parent / "README.md"
    readme.write_text("# a course\n", encoding="utf-8")
    code, out, err = invoke(["check", "README.md"], tiny_course.parent, monkeypatch)
    assert code == 2
    assert "no course files matched: README.md" in err
    assert "All checks passed" not in out
    # Mixed with a course file: the outside one is named and ignored, the rest checked.
    code, out, err = invoke(
        ["check", "README.md", "course/course.yaml"], tiny_course.parent, monkeypatch
    )
    assert code == 0, out + err
    assert "README.md: not in the course; ignored" in err
    # The repository root holds the course: it matches.
    code, _, _ = invoke(["check", "."], tiny_course.parent, monkeypatch)
    assert code == 0


def test_course_at_the_repository_root_hints_at_course(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = invoke(["check", "--course", "."], tiny_course.parent, monkeypatch)
    assert code == 2
    assert "did you mean --course course?" in err


def test_a_misspelt_status_and_an_unknown_level_list_the_choices(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tiny_course / "I/1-first/chapter.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "status: publishd\n", encoding="utf-8")
    code, out, _ = invoke(["check", "--no-cache"], tiny_course.parent, monkeypatch)
    assert code == 1
    assert (
        "'publishd' is not a valid value; did you mean 'published'? (one of: draft, published)"
        in out
    )
    path.write_text(text.replace("maturity: M0", "maturity: M9"), encoding="utf-8")
    code, out, _ = invoke(["check", "--no-cache"], tiny_course.parent, monkeypatch)
    assert code == 1
    assert "unknown maturity level 'M9'" in out
    assert "(one of: M0)" in out  # the tiny course's ladder has one rung


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[draft]", "'status': expected one of draft, published, found a list"),
        ("{a: 1}", "'status': expected one of draft, published, found a mapping"),
        ("", "'status': expected one of draft, published, found an empty value"),
        ("3", "'status': 3 is not a valid value (one of: draft, published)"),
        ("Draft", "'status': 'Draft' is not a valid value; did you mean 'draft'?"),
    ],
)
def test_a_status_of_the_wrong_kind_names_the_choices(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    path = tiny_course / "I/1-first/chapter.yaml"
    path.write_text(path.read_text(encoding="utf-8") + f"status: {value}\n", encoding="utf-8")
    code, out, _ = invoke(["check", "--no-cache"], tiny_course.parent, monkeypatch)
    assert code == 1
    assert expected in out, out


def test_one_of_guesses_only_a_clear_winner_and_lists_small_sets() -> None:
    ladder = ["M0", "M1", "M2", "M3", "M4"]
    assert one_of("M9", ladder, cutoff=0.5) == " (one of: M0, M1, M2, M3, M4)"
    assert one_of("publishd", ["draft", "published"]) == (
        "; did you mean 'published'? (one of: draft, published)"
    )
    many = [f"strand{i}" for i in range(12)]
    assert one_of("strand1x", many).startswith("; did you mean 'strand1'?")
    assert "one of" not in one_of("zzz", many)
