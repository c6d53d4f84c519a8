"""CK2xx: each rule fails on one small edit of the golden course, on the expected line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import (
    CHAPTER,
    EXERCISE,
    LESSON,
    PROBLEM,
    Case,
    assert_case,
    copy_golden,
    edit,
    line_of,
    run_check,
)

BUNDLED = Path(__file__).resolve().parents[2] / "course"

CASES = [
    Case(
        "CK201",
        CHAPTER,
        [
            (
                CHAPTER,
                "notation:\n",
                "notation:\n  - {symbol: '\\mathrm{softmax}', meaning: a soft maximum}\n",
            )
        ],
        "a soft maximum",
    ),
    Case(
        "CK201",
        CHAPTER,
        [(CHAPTER, "notation:\n", "notation:\n  - {symbol: v, meaning: a value row}\n")],
        "a value row",
    ),
    Case(
        "CK202",
        CHAPTER,
        [
            (
                CHAPTER,
                "propositions:\n",
                "  - {symbol: 'x_{t}', meaning: the vector of the token at position t}\npropositions:\n",
            )
        ],
        "symbol: 'x_{t}'",
    ),
    Case(
        "CK203",
        CHAPTER,
        [
            (
                CHAPTER,
                "propositions:\n",
                "  - {symbol: d_k, meaning: width of a key}\npropositions:\n",
            )
        ],
        "symbol: d_k",
    ),
    Case(
        "CK204",
        LESSON,
        [(LESSON, "A sentence of $T$", "A sentence of $n$")],
        "A sentence of $n$",
        at="n$",
    ),
    Case(
        "CK204",
        CHAPTER,
        [(CHAPTER, "The tokens $x_1$ to $x_T$", "The tokens $x_1$ to $x_n$")],
        "The tokens $x_1$ to $x_n$",
        at="x_n$ in a row",
    ),
    Case(
        "CK204",
        CHAPTER,
        [(CHAPTER, "each a vector $v$.", "each a vector $W_hh$.")],
        "each a vector",
        at="W_hh",
    ),
    Case("CK204", PROBLEM, [(PROBLEM, "$T = 4$", "$N = 4$")], "statement:", at="N = 4"),
    Case(
        "CK204", EXERCISE, [(EXERCISE, "$x_1$ to $x_T$", "$y_1$ to $x_T$")], "statement:", at="y_1"
    ),
    Case(
        "CK204",
        LESSON,
        [(LESSON, "What is $x_t$?", "What is $\\alpha_{t}$?")],
        "What is",
        at="\\alpha",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fails_on_broken_copy(tmp_path: Path, case: Case) -> None:
    assert_case(tmp_path, case)


def test_indexed_uses_are_covered_by_their_family(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / LESSON, "is $x_t$;", "is $x_t$, after $x_{t-1}$ and before $x_{t+1}$;")
    assert not [d for d in run_check(course) if d.code.startswith("CK2")]


def test_local_override_is_not_a_conflict(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / CHAPTER,
        "notation:\n",
        "notation:\n  - {symbol: v, meaning: a value row, local: true}\n",
    )
    assert "CK201" not in {d.code for d in run_check(course)}


def test_spelling_of_subscripts_does_not_matter(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(course / CHAPTER, "symbol: x_t", "symbol: 'x_{ t }'")
    assert not [d for d in run_check(course) if d.code.startswith("CK2")]


def test_undeclared_symbol_message_suggests_the_tex_reading(tmp_path: Path) -> None:
    course = copy_golden(tmp_path)
    edit(
        course / CHAPTER,
        "  - symbol: x_t\n",
        "  - symbol: x_t\n    meaning: the vector\n  - symbol: W_hh\n",
    )
    edit(
        course / CHAPTER,
        "    meaning: the vector of the token at position t\n",
        "    meaning: recurrent weights\n",
    )
    edit(course / LESSON, "is $x_t$;", "is $x_t$ and $W_hh$;")
    messages = [d.message for d in run_check(course) if d.code == "CK204"]
    assert any("write `W_{hh}`" in m for m in messages), messages


def test_maths_the_reader_cannot_read_is_reported_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A span whose LaTeX walk raises used to count as using no symbol; now it is CK205."""
    from coursekit import latex_symbols, latex_tokens

    course = copy_golden(tmp_path)
    edit(course / LESSON, "is $x_t$;", "is $x_t$ and $\\broken{n}$;")
    edit(
        course / CHAPTER,
        "notation:\n",
        "notation:\n  - {symbol: '\\broken{m}', meaning: a broken symbol}\n",
    )
    real_walk = latex_tokens.walk

    def walk(text: str) -> list[object]:
        if "\\broken" in text:
            raise ValueError("walker bug")
        return real_walk(text)

    monkeypatch.setattr(latex_symbols, "_walk", walk)
    latex_symbols._maths_of.cache_clear()
    latex_symbols._read_maths.cache_clear()
    try:
        found = [d for d in run_check(course) if d.code == "CK205"]
    finally:
        latex_symbols._maths_of.cache_clear()
        latex_symbols._read_maths.cache_clear()
    lesson_line = line_of(course / LESSON, "\\broken{n}")
    column = (course / LESSON).read_text().split("\n")[lesson_line - 1].index("$\\broken") + 1
    assert any(
        d.path.endswith(LESSON) and (d.line, d.column) == (lesson_line, column) for d in found
    ), found
    assert any(
        "ValueError: walker bug" in d.message and "'$\\broken{n}$'" in d.message for d in found
    )
    chapter_line = line_of(course / CHAPTER, "\\broken{m}")
    assert any(d.path.endswith(CHAPTER) and d.line == chapter_line for d in found), found


def test_the_three_notation_rules_ask_for_each_texts_maths_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CK203, CK204 and CK205 share one walk of each chapter's texts: past the walker's own
    cache (4,096 texts, ~900 chapters) each asking for it again had walked every span anew."""
    from coursekit.rules import notation

    asked: dict[str, list[str]] = {}

    def counted(name: str) -> object:
        real = getattr(notation, name)

        def ask(markdown: str) -> object:
            asked.setdefault(markdown, []).append(name)
            return real(markdown)

        return ask

    for name in ("symbols_in_markdown", "unreadable_maths"):
        monkeypatch.setattr(notation, name, counted(name))
    course = copy_golden(tmp_path)
    run_check(course, fresh=True)
    assert any("$" in text for text in asked), "no text with maths was asked for"
    for text, names in asked.items():
        assert sorted(names) == ["symbols_in_markdown", "unreadable_maths"], (text[:60], names)


def test_a_long_lived_process_makes_a_chapters_declarations_once_whatever_its_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CK201's declarations are remembered by the identity of the chapter's notation rows
    (`chapter_notation`), which stay the same objects from run to run for an eager chapter
    (by its manifest) as for one replayed from its record (coursekit.model.deferred)."""
    from coursekit import memo
    from coursekit.load import load_course
    from coursekit.model.deferred import chapter_links, deferred_chapter
    from coursekit.rules import _declarations

    course = load_course(BUNDLED, BUNDLED.parent).course
    eager = next(c for c in course.chapters.values() if c.manifest.notation)
    fields = {"book_id": eager.book_id, "dir": eager.dir, "path": eager.path}
    known = [eager.id, [[], [], []], ["0.X"], [["d", "a width", False]], "draft", [[], [], []]]
    replayed = deferred_chapter(lambda: eager.manifest, known, **fields)
    monkeypatch.setattr(memo, "REMEMBERING", True)
    for chapter in (eager, replayed):
        assert _declarations.chapter_shared(chapter) is _declarations.chapter_shared(chapter)
        assert chapter_links(chapter) is chapter_links(chapter)
    monkeypatch.setattr(memo, "REMEMBERING", False)  # a one-shot check holds on to nothing
    assert _declarations.chapter_shared(eager) is not _declarations.chapter_shared(eager)
    assert _declarations.chapter_shared(eager) == _declarations.chapter_shared(eager)
