"""What a verdict is about, and what came of it: the verifier's two enumerations.

Typed as literals so the type checker refuses a status nobody declared, and enumerated
(`SUBJECTS`, `STATUSES`) so a caller can map every pair (coursekit.rules.outcomes does, and its
test walks them all).
"""

from __future__ import annotations

from typing import Literal, get_args

Subject = Literal["spec", "formula", "shape", "claim", "equation", "number", "quiz"]
Status = Literal["ok", "false", "unproven", "error", "timeout", "crashed", "missing", "skipped"]
SUBJECTS: tuple[Subject, ...] = get_args(Subject)
STATUSES: tuple[Status, ...] = get_args(Status)
#: Statuses that say something about the machine or the moment, not about the maths.
VOLATILE: frozenset[str] = frozenset({"timeout", "crashed"})

__all__ = ["STATUSES", "SUBJECTS", "VOLATILE", "Status", "Subject"]
