"""Shared values for the reporter tests: diagnostics as rules make them, a broken course copy.

Plain functions rather than conftest fixtures: other test folders import `conftest` by module
name, and a second conftest.py here would shadow theirs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coursekit.diagnostics import Diagnostic, Severity
from coursekit.report import Report
from helpers import coursekit_tables

CHAPTER = "course/II/2-from-recurrence-to-attention/chapter.yaml"
CHAPTER_TEXT = "id: II.2\napparatus:\n  - id: 0.IT.09\n    title: Entropy\n"


def sample_report() -> Report:
    """An error with its source line, and a warning without."""
    return Report(
        diagnostics=[
            Diagnostic(
                CHAPTER,
                3,
                9,
                "CK103",
                "unknown key 'tittle' (did you mean 'title'?)",
                Severity.ERROR,
                "unknown-key",
            ),
            Diagnostic(
                "course/II/book.yaml",
                1,
                1,
                "CK110",
                "chapter folder '3' is not listed",
                Severity.WARNING,
                "unlisted-file",
            ),
        ],
        sources={CHAPTER: CHAPTER_TEXT},
    )


REPO = Path(__file__).resolve().parents[2]


def copy_course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository's course with one unknown key, as the working directory."""
    shutil.copytree(REPO / "course", tmp_path / "course")
    config = coursekit_tables((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    if config:
        (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    with (tmp_path / "course" / "course.yaml").open("a", encoding="utf-8") as handle:
        handle.write("bogus_key: 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path
