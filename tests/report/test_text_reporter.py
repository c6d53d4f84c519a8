"""`--format text`: `path:line:col: CODE message`, the source line, and a caret under the column."""

from __future__ import annotations

from reporting import sample_report

from coursekit.diagnostics import Diagnostic, Severity
from coursekit.report import REPORTERS, Report


def test_caret_under_the_column() -> None:
    report = sample_report()
    lines = REPORTERS["text"](report).splitlines()
    assert lines[:4] == [
        "course/II/2-from-recurrence-to-attention/chapter.yaml:3:9: CK103 "
        "unknown key 'tittle' (did you mean 'title'?)",
        "  |",
        "3 |   - id: 0.IT.09",
        "  |         ^",
    ]
    source, caret = lines[2], lines[3]
    assert source[caret.index("^")] == "0"  # the caret sits on the value's first character


def test_warning_is_marked_and_summary_counts() -> None:
    report = sample_report()
    out = REPORTERS["text"](report)
    assert "course/II/book.yaml:1:1: CK110 chapter folder '3' is not listed (warning)" in out
    assert out.endswith("Found 1 error and 1 warning.\n")


def test_wide_gutter_and_tabs() -> None:
    text = "\n" * 99 + "\tkey: value\n"
    d = Diagnostic("a.yaml", 100, 7, "CK103", "m", Severity.ERROR)
    lines = REPORTERS["text"](Report(diagnostics=[d], sources={"a.yaml": text})).splitlines()
    assert lines[1:4] == ["    |", "100 |  key: value", "    |       ^"]
    assert lines[2][lines[3].index("^")] == "v"


def test_long_line_keeps_the_caret_on_its_character() -> None:
    line = "x" * 300 + "TARGET" + "y" * 300
    d = Diagnostic("a.md", 1, 301, "CK103", "m")
    lines = REPORTERS["text"](Report(diagnostics=[d], sources={"a.md": line})).splitlines()
    source, caret = lines[2], lines[3]
    assert len(source) <= len("1 | ") + 160
    assert source[caret.index("^") :].startswith("TARGET")


def test_no_source_no_excerpt() -> None:
    d = Diagnostic("gone.yaml", 4, 2, "CK109", "missing")
    assert REPORTERS["text"](Report(diagnostics=[d])) == (
        "gone.yaml:4:2: CK109 missing\n\nFound 1 error and 0 warnings.\n"
    )


def test_clean() -> None:
    assert REPORTERS["text"](Report(diagnostics=[])) == "All checks passed.\n"


def test_the_same_finding_shows_its_files_text_as_it_is_now() -> None:
    # a long-lived process renders the very diagnostic objects of its last run again
    d = Diagnostic("a.md", 2, 3, "CK101", "msg", Severity.ERROR, "some-rule")
    render = REPORTERS["text"]
    before = render(Report([d], {"a.md": "one\nthe old line\n"}))
    assert "2 | the old line" in before
    assert render(Report([d], {"a.md": "one\nthe old line\n"})) == before
    after = render(Report([d], {"a.md": "one\nthe new line\n"}))
    assert "2 | the new line" in after and "old" not in after
    assert "\x1b[" in render(Report([d], {"a.md": "one\nthe new line\n"}, color=True))
    assert "2 |" not in render(Report([d], {}))
