"""`coursekit rules` and SARIF show each rule's first sentence: whole, never cut mid-sentence."""

from __future__ import annotations

import pytest

from coursekit.rules import REGISTRY
from coursekit.rules.base import first_sentence


def test_every_summary_is_a_whole_first_sentence() -> None:
    for rule in REGISTRY.values():
        paragraph = " ".join(rule.doc.split("\n\n", 1)[0].split()) if rule.doc else rule.name
        assert paragraph.startswith(rule.summary), rule.code
        if rule.doc:
            last = rule.summary.rstrip(".").rsplit(" ", 1)[-1]
            assert last.lower() not in {"prop", "fig", "e.g", "i.e", "cf", "no"}, rule.code


def test_ck403_keeps_its_proposition_number() -> None:
    assert REGISTRY["CK403"].summary.endswith("the claim of its Prop. 1.")


@pytest.mark.parametrize(
    ("paragraph", "first"),
    [
        ("One. Two.", "One."),
        ("See Prop. 1 of it. Then more.", "See Prop. 1 of it."),
        ("Cited, e.g. Fig. 2 here. Next.", "Cited, e.g. Fig. 2 here."),
        ("A value of 3.5 is fine. Next.", "A value of 3.5 is fine."),
        ("Ends with no second", "Ends with no second"),
        ("Section I. Is a heading.", "Section I. Is a heading."),
    ],
)
def test_first_sentence(paragraph: str, first: str) -> None:
    assert first_sentence(paragraph) == first
