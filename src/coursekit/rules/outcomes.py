"""Every outcome of the expensive checks, and the diagnostic it yields: one table.

The sympy verifier returns a ``(subject, status)`` per check (a claim, a display equation, a
number in the prose, a quiz answer, a formula, the assumptions); the program runner returns a
status per program. A green check must mean that every one of them came out ``ok``, so every
other pair maps here to a rule and a severity: nothing is left for a rule to forget. The rules of
CK8 and CK9 report what this table says, and a test walks every pair the verifier's and the
runner's own enumerations define (a status added later without a row fails that test).

``kept`` says whether a verdict may be cached: a timeout or a killed worker says something about
the machine and the moment, not about the course, and is never kept (nor is a whole run that
contained one).
"""

from __future__ import annotations

from coursekit.diagnostics import Severity
from coursekit.exec.types import Status as ProgramStatus
from coursekit.records import record
from coursekit.verify.status import STATUSES, SUBJECTS, VOLATILE


@record(frozen=True)
class Outcome:
    """The diagnostic one outcome yields (``code`` None: none of its own, and ``says`` why)."""

    code: str | None
    severity: Severity | None
    says: str
    kept: bool = True


E = Severity.ERROR

#: CK801 also takes a claim's ``error`` that points into formula text (it has an offset).
CLAIM_SYNTAX_CODE = "CK801"

_PASS = Outcome(None, None, "passes: no diagnostic")
_UPSTREAM = Outcome(
    None, None, "no diagnostic of its own: what it depends on failed and is reported there"
)
_TIMEOUT = Outcome("CK806", E, "timed out after sympy-seconds", kept=False)
_CRASHED = Outcome(
    "CK813", E, "the check crashed (worker killed, out of memory, sympy raised)", kept=False
)
_UNPROVEN = Outcome(
    "CK805", E, "could not be proven: add an assumption in `assume`, a `where`, or a simpler form"
)

#: (subject, status) of a sympy verdict -> its diagnostic. Subjects and statuses are those of
#: coursekit.verify.status; pairs the verifier does not produce today are mapped all the same.
MATHS: dict[tuple[str, str], Outcome] = {}
for _subject in SUBJECTS:
    MATHS[(_subject, "ok")] = _PASS
    MATHS[(_subject, "skipped")] = _UPSTREAM
    MATHS[(_subject, "timeout")] = _TIMEOUT
    MATHS[(_subject, "crashed")] = _CRASHED
    MATHS[(_subject, "unproven")] = _UNPROVEN
    MATHS[(_subject, "missing")] = Outcome("CK809", E, "cites a claim the lesson does not declare")
    MATHS[(_subject, "false")] = Outcome("CK804", E, "is false")
    MATHS[(_subject, "error")] = Outcome("CK807", E, "cannot be checked as written")
MATHS.update(
    {
        ("spec", "error"): Outcome("CK801", E, "the assumptions cannot be read"),
        ("formula", "error"): Outcome("CK801", E, "the formula is not accepted by the parser"),
        ("shape", "false"): Outcome("CK823", E, "the formula's matrix shapes do not fit"),
        ("shape", "error"): Outcome("CK823", E, "the formula's shapes cannot be checked"),
        ("claim", "error"): Outcome(
            "CK807", E, "cannot be checked as written (CK801 when it points into formula text)"
        ),
        ("equation", "error"): Outcome("CK802", E, "the LaTeX is outside the supported subset"),
        ("equation", "false"): Outcome("CK803", E, "the LaTeX shows another expression"),
        ("equation", "missing"): Outcome(
            "CK811", E, "the label names no declared formula, so nothing checks it"
        ),
        ("number", "false"): Outcome("CK808", E, "the prose shows another number"),
        ("number", "error"): Outcome("CK808", E, "the prose number cannot be read"),
        ("quiz", "false"): Outcome("CK812", E, "the answer is not what the claim computes"),
        ("quiz", "error"): Outcome("CK812", E, "the answer cannot be compared with the claim"),
    }
)

#: A program's outcome status (coursekit.exec.types.Status, or "mismatch") -> its diagnostic.
PROGRAMS: dict[str, Outcome] = {
    ProgramStatus.OK: _PASS,
    ProgramStatus.ERROR: Outcome("CK901", E, "the program raised"),
    ProgramStatus.TIMEOUT: Outcome("CK902", E, "ran past exec-seconds", kept=False),
    ProgramStatus.MEMORY: Outcome("CK903", E, "ran out of exec-memory-mb"),
    ProgramStatus.OUTPUT: Outcome("CK904", E, "printed or returned too much"),
    ProgramStatus.EXITED: Outcome("CK905", E, "exited before returning a result"),
    ProgramStatus.NO_RESULT: Outcome("CK905", E, "no solve(), or it returned no data"),
    # A signal from outside (the OOM killer's SIGKILL) cannot be told from the program's own.
    ProgramStatus.CRASHED: Outcome("CK906", E, "killed by a signal, or the runner failed", False),
    "mismatch": Outcome("CK907", E, "the result disagrees with the published solution"),
}


def maths_outcome(subject: str, status: str, offset: int | None = None) -> Outcome:
    """The row for a sympy verdict; an unknown pair is a crash, never a pass."""
    if subject == "claim" and status == "error" and offset is not None:
        return Outcome(CLAIM_SYNTAX_CODE, E, "a formula field of the claim does not parse")
    return MATHS.get((subject, status), _CRASHED)


def program_outcome(status: str) -> Outcome:
    """The row for a program's status; an unknown status is a crash, never a pass."""
    return PROGRAMS.get(status, PROGRAMS[ProgramStatus.CRASHED])


def kept(subject: str, status: str) -> bool:
    """Whether a sympy verdict may be cached (never one that depended on the clock)."""
    return status not in VOLATILE and maths_outcome(subject, status).kept


def table() -> list[tuple[str, str, str, str, str]]:
    """Every row as text, ``(subject, status, code, severity, says)``, for docs and reports."""
    rows = [
        (subject, status, o.code or "-", str(o.severity or "-"), o.says)
        for (subject, status), o in MATHS.items()
    ]
    rows += [
        ("program", str(status), o.code or "-", str(o.severity or "-"), o.says)
        for status, o in PROGRAMS.items()
    ]
    return rows


__all__ = [
    "MATHS",
    "PROGRAMS",
    "STATUSES",
    "Outcome",
    "kept",
    "maths_outcome",
    "program_outcome",
    "table",
]
