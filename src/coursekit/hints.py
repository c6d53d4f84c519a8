"""The "did you mean" every message shares: one spelling, one notion of close."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# Up to this many valid values are listed in full: the author sees every choice at once.
FEW = 8


def did_you_mean(value: str, known: Iterable[str], cutoff: float = 0.6, otherwise: str = "") -> str:
    """`; did you mean 'x'?` for the closest known name, else `otherwise` (e.g. the list).

    The value itself is never suggested: a message that rejects 'II.2' and then proposes 'II.2'
    contradicts itself (the value is known but not usable where it is written).
    """
    close = difflib.get_close_matches(value, [k for k in known if k != value], n=1, cutoff=cutoff)
    return f"; did you mean '{close[0]}'?" if close else otherwise


def one_of(value: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """For a value outside a fixed set: the one clear suggestion, and the set when it is small.

    A suggestion is made only when one candidate is closer than all others ('M9' is as close to
    M0 as to M4, so none is guessed); a set of up to FEW values is always listed.
    """
    names = list(dict.fromkeys(known))
    scored = sorted(
        ((difflib.SequenceMatcher(None, value, name).ratio(), name) for name in names),
        key=lambda pair: -pair[0],
    )
    hint = ""
    if scored and scored[0][0] >= cutoff and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        hint = f"; did you mean '{scored[0][1]}'?"
    if names and len(names) <= FEW:
        hint += f" (one of: {', '.join(names)})"
    return hint
