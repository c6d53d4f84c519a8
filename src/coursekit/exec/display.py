"""What of a run is shown to a person: a program's text made safe for a terminal, and one line
when the programs ran in a weaker sandbox than the strongest."""

from __future__ import annotations

import re
from collections.abc import Iterable

from coursekit.exec.types import Outcome

#: C0 and C1 control characters but newline and tab, DEL, and the bidirectional overrides
#: and isolates, and lone surrogates: a program's text must not move the cursor, recolour or
#: reorder a terminal, nor make writing it out fail.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def printable(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\r``)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


#: What each weaker mode gives up, against the namespace sandbox with a cgroup per job.
_WEAKER = {
    "setuid": "no network, IPC or /proc isolation, and files are protected only by permissions",
    "basic": "not root: no isolation from the network, or from the files and processes of "
    "this user",
}


def sandbox_note(outcomes: Iterable[Outcome]) -> str:
    """One line for the summary when programs ran in a weaker mode than the strongest; else ''."""
    for outcome in outcomes:
        mode, budget = outcome.sandbox, str(outcome.extra.get("budget", ""))
        counted = budget.startswith("cgroup")
        if mode == "namespace" and counted:
            continue
        lost = [_WEAKER[mode]] if mode in _WEAKER else []
        if not counted:
            lost.append("no cgroup, so a job may not start processes")
        return (
            f"note: worked problems ran in the weaker '{mode}' sandbox ({'; '.join(lost)}); "
            "see docs/exec.md"
        )
    return ""
