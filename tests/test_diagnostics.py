"""Diagnostics sort by their fields in order (`diagnostics.ORDER`, the key the engine sorts by)."""

from __future__ import annotations

import random

from coursekit.diagnostics import ORDER, Diagnostic, Severity


def test_the_sort_key_orders_as_the_dataclass_compares() -> None:
    pick = random.Random(20).choice
    found = [
        Diagnostic(
            pick(["a.md", "b.md", "a.yaml"]),
            pick([1, 2, 10]),
            pick([1, 5]),
            pick(["CK101", "CK201"]),
            pick(["m", "n"]),
            pick(list(Severity)),
            pick(["", "rule"]),
            pick([False, True]),
            pick([(), ("x.md",), ("a.md", "b.md")]),
        )
        for _ in range(2000)
    ]
    assert sorted(found, key=ORDER) == sorted(found)
    assert len({ORDER(d) for d in found}) == len(set(found))  # every field is in the key
