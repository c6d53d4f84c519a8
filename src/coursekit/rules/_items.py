"""One thing a reader sees (a number, a display equation, an order of growth) and its account."""

from __future__ import annotations

from collections.abc import Callable

from coursekit.model.base import Location
from coursekit.records import record

KINDS = ("numbers", "displays", "orders")
STATUSES = ("checked", "given", "untied", "false", "unreadable")

Where = Location | Callable[[], Location]


@record(frozen=True)
class Item:
    """One thing the reader sees, and how it is accounted for."""

    chapter: str
    kind: str  # one of KINDS
    status: str  # one of STATUSES
    at: Where  # a callable is asked only if the item is reported
    text: str
    code: str | None = None  # the rule that reports it, if any
    message: str = ""
    claim: str | None = None  # the claim a fix would tie it to
    span: tuple[str, int, int] | None = None  # (path, start, end) in the body, for a fix
    sides: tuple[tuple[str, str], ...] = ()  # an identity for sympy: (formula, LaTeX) per side

    @property
    def location(self) -> Location:
        return self.at if isinstance(self.at, Location) else self.at()
