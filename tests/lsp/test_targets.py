"""What the cursor is on, and where it leads, for every link scheme, claims, codes and symbols.

Driven through `CourseState` on the bundled course (checked once, without programs): the same
functions the server calls for hover, definition and completion.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coursekit.lsp import completion, targets
from coursekit.lsp.state import CourseState
from coursekit.project import find_project

REPO = Path(__file__).resolve().parents[2]
CHAPTER = "course/II/2-from-recurrence-to-attention"
GOODBYE = f"{CHAPTER}/lessons/goodbye-to-recurrence.md"


@pytest.fixture(scope="module")
def state() -> CourseState:
    state = CourseState(find_project(REPO))
    state.analyse(formulas=False)
    return state


def _target(state: CourseState, rel: str, text: str, needle: str, shift: int = 0) -> targets.Target:
    assert state.snapshot is not None
    found = targets.find(text, text.index(needle) + shift, state.snapshot.course)
    assert found is not None, needle
    target = targets.resolve(found, state.snapshot.course, state.chapter_of(rel))
    assert target is not None, found
    return target


@pytest.mark.parametrize(
    ("written", "path", "title"),
    [
        ("(fig:3)", CHAPTER + "/chapter.yaml", "The grid of scores"),
        ("(chapter:I.4)", "course/I/4-gated-recurrence/chapter.yaml", "I.4"),
        ("(lesson:II.2/masks)", CHAPTER + "/chapter.yaml", "Masks, or how to train"),
        ("(lesson:II.2/model-width)", CHAPTER + "/lessons/model-width.md", "II.2/model-width"),
        ("(prop:1)", CHAPTER + "/chapter.yaml", "Attention was the repair"),
        ("(apparatus:0.IT.01)", "course/0/book.yaml", "Entropy"),
        ("(eq:step)", CHAPTER + "/lessons/counting-multiplications.md", "d_h^2 + d_h d_x"),
    ],
)
def test_every_link_scheme_leads_to_its_target(
    state: CourseState, written: str, path: str, title: str
) -> None:
    text = f"---\ntitle: x\n---\nSee [this]{written} here.\n"
    target = _target(state, GOODBYE, text, written, 3)
    assert title in target.markdown
    assert target.location is not None and target.location.path == path


def test_a_claim_id_and_its_tied_number_lead_to_the_claim_with_its_verdict(
    state: CourseState,
) -> None:
    text = (REPO / GOODBYE).read_text(encoding="utf-8")
    on_number = _target(state, GOODBYE, text, "[26,214,400]", 3)
    on_id = _target(state, GOODBYE, text, "claim=rec-t50", 8)
    assert on_number == on_id
    assert on_number.location is not None and on_number.location.path == GOODBYE
    assert "rec-t50" in on_number.markdown and "value" in on_number.markdown
    # checked without formulas: the hover says so instead of pretending
    assert "not verified in this session yet" in on_number.markdown


def test_a_bare_apparatus_id_in_a_chapter_manifest(state: CourseState) -> None:
    text = (REPO / CHAPTER / "chapter.yaml").read_text(encoding="utf-8")
    target = _target(state, CHAPTER + "/chapter.yaml", text, "0.LA.03", 2)
    assert "Inner products" in target.markdown


def test_a_symbol_in_yaml_and_in_maths_leads_to_its_notation_entry(state: CourseState) -> None:
    yaml = "notation:\n  - symbol: W_{hh}\n    meaning: x\n"
    in_yaml = _target(state, CHAPTER + "/chapter.yaml", yaml, "W_{hh}")
    maths = "---\ntitle: x\n---\nThe step $W_{hh} h_{t-1}$ and $\\alpha_{ij}$.\n"
    in_maths = _target(state, GOODBYE, maths, "W_{hh}", 3)
    assert in_yaml == in_maths and "recurrent weight matrix" in in_maths.markdown
    assert "attention weight" in _target(state, GOODBYE, maths, "\\alpha", 2).markdown


def test_a_rule_code_in_a_suppression_shows_its_summary(state: CourseState) -> None:
    text = "x <!-- coursekit: ignore[CK504, CK301] -->\n"
    target = _target(state, GOODBYE, text, "CK301", 2)
    assert "apparatus-unresolved" in target.markdown and target.location is None


def test_an_unknown_target_is_nothing(state: CourseState) -> None:
    assert state.snapshot is not None
    text = "[a](apparatus:0.ZZ.99) and [b](lesson:II.2/nothing)\n"
    for needle in ("0.ZZ.99", "nothing"):
        found = targets.find(text, text.index(needle), state.snapshot.course)
        assert found is not None
        assert targets.resolve(found, state.snapshot.course, None) is None


def _labels(state: CourseState, text: str, rel: str = GOODBYE) -> set[str]:
    assert state.snapshot is not None
    chapter = state.chapter_of(rel)
    items = completion.complete(text, len(text), state.snapshot.course, chapter)
    return {item.label for item in items}


def test_completion_in_every_context(state: CourseState) -> None:
    assert {"0.LA.03", "0.IT.01"} <= _labels(state, "see [x](apparatus:")
    assert {"II.2/masks", "masks", "II.2/model-width"} <= _labels(state, "see [x](lesson:")
    assert {"1", "2", "3", "II.2/3"} <= _labels(state, "see [x](fig:")
    assert {"I.4", "II.2"} <= _labels(state, "see [x](chapter:")
    assert "step" in _labels(state, "see [x](eq:")
    assert {"rec-t50", "step-512"} <= _labels(state, "is [1]{claim=")
    assert {"CK301", "CK504"} <= _labels(state, "x <!-- coursekit: ignore[CK201, ")
    assert {"T", "W_{hh}", "d_k"} <= _labels(state, "so the grid is $T \\times ")
    assert _labels(state, "so the grid is $T$ and then ") == set()


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (r"$\mathbf{W}_Q$", "shape d×d_k (model-width × key-width)"),
        (r"$\mathbf{X}$", "shape T×d (positions × model-width)"),
        (r"$\mathrm{softmax}$", "applied row by row"),
    ],
)
def test_a_symbol_shows_its_declared_shape(state: CourseState, written: str, shown: str) -> None:
    text = f"---\ntitle: x\n---\nThen {written} again.\n"
    target = _target(state, f"{CHAPTER}/lessons/self-attention.md", text, written, 2)
    assert shown in target.markdown, target.markdown


def test_a_scalar_symbol_shows_no_shape(state: CourseState) -> None:
    text = "---\ntitle: x\n---\nThen $T$ again.\n"
    target = _target(state, GOODBYE, text, "$T$", 1)
    assert "sequence length" in target.markdown
    assert "shape" not in target.markdown and "row by row" not in target.markdown
