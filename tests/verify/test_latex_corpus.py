"""The reader's own corpus (tests/verify/latex_corpus/corpus.yaml): each snippet is read exactly
as recorded, or refused with the construct named; nothing is misread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from coursekit.verify.expr import FormulaError
from coursekit.verify.latex import parse_latex_sides
from coursekit.verify.latex.show import show_sides

CORPUS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "latex_corpus" / "corpus.yaml").read_text(encoding="utf-8")
)


def test_the_corpus_is_large_and_mixed() -> None:
    assert len(CORPUS) >= 250
    assert len({entry["tex"] for entry in CORPUS}) == len(CORPUS)
    read = sum("read" in entry for entry in CORPUS)
    assert read >= 0.7 * len(CORPUS)  # mostly maths that must be read, not refused


@pytest.mark.parametrize("entry", CORPUS, ids=[e["tex"][:60] for e in CORPUS])
def test_snippet(entry: dict[str, Any]) -> None:
    tex = entry["tex"]
    if "read" in entry:
        assert show_sides(parse_latex_sides(tex)) == entry["read"]
        return
    with pytest.raises(FormulaError) as info:
        parse_latex_sides(tex)
    assert entry["refuse"] in info.value.message
    assert 0 <= info.value.offset <= len(tex)
