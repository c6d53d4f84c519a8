"""Run worked-problem programs confined, fast, and in parallel; compare what they return.

Knows nothing of the rest of coursekit. ``import coursekit.exec`` does not import numpy.

    from coursekit.exec import Job, Limits, run_programs, compare
    [outcome] = run_programs([Job("p1", source, "solution.py")], Limits(wall_s=5))
    if outcome.ok:
        verdict = compare(expected, outcome.value, rtol=0, atol=0)
"""

from coursekit.exec.compare import Comparison, compare
from coursekit.exec.display import sandbox_note
from coursekit.exec.runner import (
    Progress,
    Runner,
    RunnerError,
    child_environment,
    run_programs,
)
from coursekit.exec.types import Job, Limits, Outcome, Status

__all__ = [
    "Comparison",
    "Job",
    "Limits",
    "Outcome",
    "Progress",
    "Runner",
    "RunnerError",
    "Status",
    "child_environment",
    "compare",
    "run_programs",
    "sandbox_note",
]
