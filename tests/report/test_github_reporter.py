"""`--format github`: workflow commands, escaped the way the Actions runner reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from reporting import copy_course, sample_report

from coursekit.cli import main
from coursekit.diagnostics import Diagnostic, Severity
from coursekit.report import REPORTERS, Report
from coursekit.report.github import command, escape_data, escape_property


def test_one_command_per_diagnostic() -> None:
    report = sample_report()
    lines = REPORTERS["github"](report).splitlines()
    assert lines == [
        "::error file=course/II/2-from-recurrence-to-attention/chapter.yaml,line=3,col=9,"
        "title=CK103 unknown-key::unknown key 'tittle' (did you mean 'title'?)",
        "::warning file=course/II/book.yaml,line=1,col=1,"
        "title=CK110 unlisted-file::chapter folder '3' is not listed",
    ]


def test_no_diagnostics_prints_nothing() -> None:
    assert REPORTERS["github"](Report(diagnostics=[])) == ""


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("100%", "100%25"),
        ("one\ntwo", "one%0Atwo"),
        ("one\r\ntwo", "one%0D%0Atwo"),
        ("%0A is not a newline", "%250A is not a newline"),
        ("a: b, c", "a: b, c"),  # colons and commas are fine in the message
    ],
)
def test_escape_data(raw: str, escaped: str) -> None:
    assert escape_data(raw) == escaped


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a:b", "a%3Ab"),
        ("a,b", "a%2Cb"),
        ("50%, then\nmore", "50%25%2C then%0Amore"),
    ],
)
def test_escape_property(raw: str, escaped: str) -> None:
    assert escape_property(raw) == escaped


def test_properties_and_message_are_escaped() -> None:
    d = Diagnostic(
        "course/a,b:c/100%.md",
        2,
        4,
        "CK801",
        "claimed 26,214,400: got 50%\nsecond line",
        Severity.ERROR,
        "claim-value",
    )
    line = command(d)
    assert line == (
        "::error file=course/a%2Cb%3Ac/100%25.md,line=2,col=4,title=CK801 claim-value"
        "::claimed 26,214,400: got 50%25%0Asecond line"
    )
    head, message = line[2:].split("::", 1)
    assert "\n" not in line
    assert head.count(",") == 3  # the separators of four properties, nothing more
    assert message.startswith("claimed")


def test_unnamed_code_titles_with_the_code() -> None:
    d = Diagnostic("x.yaml", 1, 1, "CK999", "m")
    assert ",title=CK999::m" in command(d)


def test_chosen_automatically_under_github_actions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_course(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["check"], env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1, result.output
    assert result.output.startswith("::error file=course/")


def test_explicit_format_wins_under_github_actions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_course(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["check", "--format", "json"], env={"GITHUB_ACTIONS": "true"})
    assert result.output.lstrip().startswith("{")
