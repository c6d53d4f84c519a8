"""Random LaTeX never makes the reader raise anything but FormulaError (and never hang)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coursekit.verify.expr import FormulaError
from coursekit.verify.latex import parse_latex, parse_latex_sides

CORPUS = yaml.safe_load(
    (Path(__file__).parent / "latex_corpus" / "corpus.yaml").read_text(encoding="utf-8")
)

# Pieces of real maths, so random joins reach deep into the grammar rather than failing at once.
_SINGLE = (
    r"\ { } ( ) [ ] _ ^ | & , ; : = < > + - * / ' . ! 0 1 2 9 a d e f h i j k n p q t x T W K O"
)
_MACROS = (
    r"\frac \sqrt \sum \prod \partial \nabla \mathbf \mathbb \mathcal \boldsymbol \hat "
    r"\tilde \bar \text{th} \mathrm{softmax} \mathsf{T} \operatorname{f} \left \right "
    r"\| \lVert \rVert \lfloor \rfloor \top \odot \cdot \times \in \le \ge \approx "
    r"\alpha \sigma \tanh \exp \log \max \begin{aligned} \end{aligned} \\ {,} \quad "
    r"\int \mid \dots \{ \}"
)
PIECES = [
    *_SINGLE.split(" "),
    *_MACROS.split(" "),
    *(entry["tex"] for entry in CORPUS[::7]),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.booleans())
def test_random_latex_is_read_or_refused(pieces: list[str], spaced: bool) -> None:
    text = (" " if spaced else "").join(pieces)
    for parse in (parse_latex_sides, parse_latex):
        try:
            parse(text)
        except FormulaError as exc:
            assert 0 <= exc.offset <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_is_read_or_refused(text: str) -> None:
    with contextlib.suppress(FormulaError):
        parse_latex_sides(text)


def test_nested_applications_are_read_ahead_once() -> None:
    """Deciding `f(...)` reads its arguments ahead; nesting must not make that exponential."""
    import time

    start = time.perf_counter()
    parse_latex_sides("f(" * 60 + "x" + ")" * 60)
    parse_latex_sides("L(" * 40 + "x + 1" + ")" * 40)
    assert time.perf_counter() - start < 2.0
