"""The "did you mean" every message shares: one spelling, one notion of close."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(value: str, known: Iterable[str], cutoff: float = 0.6, otherwise: str = "") -> str:
    """`; did you mean 'x'?` for the closest known name, else `otherwise` (e.g. the list).

    The value itself is never suggested: a message that rejects 'II.2' and then proposes 'II.2'
    contradicts itself (the value is known but not usable where it is written).
    """
    close = difflib.get_close_matches(value, [k for k in known if k != value], n=1, cutoff=cutoff)
    return f"; did you mean '{close[0]}'?" if close else otherwise
