"""Notation may carry assumptions (issue 12): declared once, inherited by every lesson."""

from __future__ import annotations

from pathlib import Path

from coursekit.config import Config
from coursekit.load import load_course
from coursekit.rules._assume import inherited, symbol_name
from coursekit.rules.base import REGISTRY, Context, Finding
from helpers import line_of

LESSON = """\
---
title: Intro
strand: basics
reading_time: 3
formulas:
  cost: T*d
claims:
  - {id: positive-cost, kind: inequality, lhs: cost, op: ">", rhs: "0"}
  - {id: whole, kind: solve, equation: "T**2 = 4", for: T, solutions: [2]}
---
The cost is

$$T d$$ {#eq:cost}
"""


def setup(course: Path, notation: str, lesson: str = LESSON) -> None:
    (course / "I/1-first/lessons/intro.md").write_text(lesson, encoding="utf-8")
    chapter = course / "I/1-first/chapter.yaml"
    chapter.write_text(chapter.read_text(encoding="utf-8") + notation, encoding="utf-8")


def findings(course: Path, code: str) -> list[Finding]:
    loaded = load_course(course, course.parent)
    assert loaded.diagnostics == [], loaded.diagnostics
    ctx = Context(course=loaded.course, config=Config())
    check = REGISTRY[code].check
    assert check is not None
    return list(check(ctx))


DECLARED = """\
notation:
  - {symbol: T, meaning: tokens, assume: [positive, integer]}
  - {symbol: d, meaning: width, assume: [positive]}
"""


def test_without_assumptions_the_claims_fail(tiny_course: Path) -> None:
    setup(
        tiny_course,
        DECLARED.replace(", assume: [positive, integer]", "").replace(", assume: [positive]", ""),
    )
    false = {f.message.split("'")[1] for f in findings(tiny_course, "CK804")}
    assert false == {"positive-cost", "whole"}  # T*d < 0 somewhere; T = -2 solves it too


def test_every_lesson_inherits_the_chapter_notation_assumptions(tiny_course: Path) -> None:
    setup(tiny_course, DECLARED)
    assert findings(tiny_course, "CK804") == []
    assert findings(tiny_course, "CK805") == []
    assert findings(tiny_course, "CK801") == []


def test_course_wide_assumptions_are_inherited_and_a_local_entry_replaces_them(
    tiny_course: Path,
) -> None:
    course_yaml = tiny_course / "course.yaml"
    course_yaml.write_text(
        course_yaml.read_text(encoding="utf-8")
        + "notation:\n  - {symbol: T, meaning: tokens, assume: [positive, integer]}\n"
        + "  - {symbol: d, meaning: width, assume: [positive]}\n",
        encoding="utf-8",
    )
    setup(tiny_course, "")
    assert findings(tiny_course, "CK804") == []
    loaded = load_course(tiny_course, tiny_course.parent)
    chapter = loaded.course.chapters["I.1"]
    assert inherited(loaded.course, chapter) == {"T": {"positive", "integer"}, "d": {"positive"}}
    chapter_yaml = tiny_course / "I/1-first/chapter.yaml"
    chapter_yaml.write_text(
        chapter_yaml.read_text(encoding="utf-8")
        + "notation:\n  - {symbol: d, meaning: a difference, local: true}\n",
        encoding="utf-8",
    )
    false = {f.message.split("'")[1] for f in findings(tiny_course, "CK804")}
    assert false == {"positive-cost"}  # d is no longer known to be positive here


def test_assumptions_on_a_symbol_formulas_cannot_name_are_reported(tiny_course: Path) -> None:
    setup(tiny_course, DECLARED + "  - {symbol: '\\mathrm{softmax}', meaning: s, assume: [real]}\n")
    (found,) = findings(tiny_course, "CK801")
    assert found.location.path.endswith("I/1-first/chapter.yaml")
    assert found.location.line == line_of(tiny_course / "I/1-first/chapter.yaml", "softmax")
    assert "'\\mathrm{softmax}' carries assumptions" in found.message


def test_an_unknown_assumption_kind_is_a_schema_error(tiny_course: Path) -> None:
    setup(tiny_course, "notation:\n  - {symbol: T, meaning: tokens, assume: [postive]}\n")
    loaded = load_course(tiny_course, tiny_course.parent)
    (bad,) = loaded.diagnostics
    assert bad.line == line_of(tiny_course / "I/1-first/chapter.yaml", "postive")
    assert "postive" in bad.message


def test_symbol_names() -> None:
    assert symbol_name("W_{hh}") == "W_hh" and symbol_name("\\alpha") == "alpha"
    assert symbol_name("Td") is None and symbol_name("\\mathrm{softmax}") is None
