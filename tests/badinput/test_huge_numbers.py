"""A reference number past Python's 4,300-digit conversion limit does not resolve; no rule crashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CHAPTER, LESSON, cli, line_of, replace_in, snapshot

DIGITS = "9" * 5000

# (what the lesson's link becomes, the code that must report it)
CASES = {
    "fig in another chapter": (f"[Fig. 1](fig:I.1/{DIGITS})", "CK503"),
    "fig in this chapter": (f"[Fig. 1](fig:{DIGITS})", "CK503"),
    "prop link": (f"[Prop. 1](prop:{DIGITS})", "CK404"),
    "prop mention": (f"Prop. {DIGITS}", "CK404"),
}
LINKS = {"fig": "[Fig. 1](fig:1)", "prop": "[Prop. 1](prop:1)"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_reference_number_is_unresolved_at_its_line(project: Path, case: str) -> None:
    new, code = CASES[case]
    old = LINKS["prop" if "prop" in case.lower() or "Prop" in new else "fig"]
    replace_in(project / LESSON, old, new)
    result = cli(project, "check", "--no-exec", "--no-cache")
    assert result.code == 1
    line = line_of(project / LESSON, DIGITS[:50])
    assert (LESSON, line) in {(p, n) for p, n, _ in result.located(code)}, result.output
    assert "CK000" not in result.output
    # the message quotes the value, shortened: a diagnostic line stays readable
    assert max(len(row) for row in result.output.splitlines() if " CK" in row) < 400


def test_fix_renumbers_around_a_huge_figure_reference(project: Path) -> None:
    replace_in(
        project / CHAPTER, "  - number: 1\n    title: A row", "  - number: 2\n    title: A row"
    )
    replace_in(project / LESSON, "[Fig. 1](fig:1)", f"[a far one](fig:{DIGITS}), [the row](fig:2)")
    before = snapshot(project)
    result = cli(project, "fix")
    assert result.code == 1, result.output  # the huge reference is left, unresolved
    after = snapshot(project)
    assert after != before
    lesson = (project / LESSON).read_text(encoding="utf-8")
    assert f"(fig:{DIGITS})" in lesson and "[the row](fig:1)" in lesson


def test_new_chapter_skips_a_listed_chapter_number_of_5000_digits(project: Path) -> None:
    replace_in(project / "course/I/book.yaml", "chapters: [I.1]", f"chapters: [I.1, I.{DIGITS}]")
    result = cli(project, "new", "chapter", "--book", "I", "--title", "Zed", "--dry-run")
    assert result.code == 0, result.output
    assert "+id: I.2" in result.output
