"""The issue's acceptance edits, each applied to a copy of the frozen seed course."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import edit, line_of, run_check

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "seed-course" / "course"
II2 = "II/2-from-recurrence-to-attention/chapter.yaml"
I4 = "I/4-gated-recurrence/chapter.yaml"
LESSON = "II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"
THESIS = (
    "Attention was the repair for one particular bottleneck, not an improvement across the board."
)

ALT2 = (
    "    alt: >-\n"
    "      A table with one row per architecture and two columns, the path between two positions\n"
    "      and how the work over the sequence runs. RNN: $O(T)$, sequential. LSTM or GRU: $O(T)$,\n"
    "      sequential. CNN: $O(\\log T)$, parallel. Attention: $O(1)$, parallel. A note under the\n"
    "      table says attention pays for its short path with a grid of order $T^2$.\n"
)

EDITS: list[tuple[str, str, str, str, str, str]] = [
    # (code, file to edit, old, new, file of the diagnostic, needle for its line)
    ("CK301", II2, "  - id: 0.IT.01\n", "  - id: 0.IT.07\n", II2, "0.IT.07"),
    (
        "CK303",
        II2,
        "    title: Entropy\n",
        "    title: Entropy and surprise\n",
        II2,
        "Entropy and surprise",
    ),
    (
        "CK401",
        II2,
        "figures:\n  - number: 1\n",
        "  - number: 1   # twice\n    claim: A second claim.\n    gloss: Its gloss.\n\nfigures:\n  - number: 1\n",
        II2,
        "# twice",
    ),
    ("CK403", II2, f"thesis: {THESIS}", "thesis: Attention was a repair.", II2, "thesis:"),
    (
        "CK201",
        I4,
        "notation: []",
        "notation:\n  - {symbol: T, meaning: temperature}",
        I4,
        "temperature",
    ),
    (
        "CK204",
        LESSON,
        "reads $T$ tokens in $T$ steps",
        "reads $n$ tokens in $T$ steps",
        LESSON,
        "reads $n$ tokens",
    ),
    ("CK501", LESSON, "(lesson:II.2/masks)", "(lesson:II.2/maskes)", LESSON, "lesson:II.2/maskes"),
    ("CK507", II2, ALT2, "", II2, "  - number: 2"),
    (
        "CK602",
        LESSON,
        "      - text: Looking up the vector $x_t$ of every token.\n",
        "      - text: Looking up the vector $x_t$ of every token.\n        correct: true\n",
        LESSON,
        "Looking up the vector",
    ),
    ("CK701", II2, "status: draft", "status: published", II2, "status: published"),
]


@pytest.mark.parametrize("case", EDITS, ids=[case[0] for case in EDITS])
def test_acceptance_edit(tmp_path: Path, case: tuple[str, str, str, str, str, str]) -> None:
    code, file, old, new, where, needle = case
    course = tmp_path / "course"
    shutil.copytree(SEED, course)
    assert not [d for d in run_check(course) if d.severity == "error"]
    edit(course / file, old, new)
    diagnostics = run_check(course)
    line = line_of(course / where, needle)
    assert any(
        d.code == code and d.path == f"course/{where}" and d.line == line for d in diagnostics
    ), "\n".join(f"{d.path}:{d.line} {d.code} {d.message}" for d in diagnostics)
