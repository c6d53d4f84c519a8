"""Shared fixtures. `tiny_course` is the smallest valid course, built fresh in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkout_guard import untracked

REPO = Path(__file__).resolve().parent.parent

COURSE = """\
title: Tiny
books: ["0", I]
strands:
  - {id: basics, purpose: what the words mean}
maturity:
  - id: M0
    name: Outline
"""
BOOK0 = """\
id: "0"
title: Apparatus
apparatus:
  - id: 0.LA.01
    title: Vectors
    summary: Lists of numbers.
"""
BOOK1 = """\
id: I
title: One
chapters: [I.1]
"""
CHAPTER = """\
id: I.1
title: First
thesis: Things happen.
dek: A dek.
problem: A problem.
maturity: M0
items:
  - lesson: intro
"""
LESSON = """\
---
title: Intro
strand: basics
reading_time: 3
---
Body text.
"""


def make_course(root: Path) -> Path:
    """Write the tiny course under root/course and return that folder."""
    course = root / "course"
    files = {
        "course.yaml": COURSE,
        "0/book.yaml": BOOK0,
        "I/book.yaml": BOOK1,
        "I/1-first/chapter.yaml": CHAPTER,
        "I/1-first/lessons/intro.md": LESSON,
    }
    for name, text in files.items():
        path = course / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return course


@pytest.fixture
def tiny_course(tmp_path: Path) -> Path:
    return make_course(tmp_path)


# Tests write only in temporary folders: the run must leave the checkout as it found it. Checked
# once, on the controller (not on each xdist worker), after every worker has finished.
_BEFORE = pytest.StashKey[set[str] | None]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_BEFORE] = untracked(REPO)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = untracked(REPO) if before is not None else None
    if before is None or after is None:
        return
    gained = sorted(after - before)
    if gained:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "tests wrote into the checkout (use tmp_path, a copy, or --no-cache): "
                + ", ".join(gained),
                red=True,
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow end-to-end tests first: xdist hands tests out in this order, so the long ones
    start while the short ones fill the other workers, rather than ending the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
