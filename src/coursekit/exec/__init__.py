"""Run worked-problem programs confined, fast, and in parallel; compare what they return.

Knows nothing of the rest of coursekit (but the leaf ``coursekit.lazy``, which makes its names
import when first asked for). ``import coursekit.exec`` does not import numpy.

    from coursekit.exec import Job, Limits, run_programs, compare
    [outcome] = run_programs([Job("p1", source, "solution.py")], Limits(wall_s=5))
    if outcome.ok:
        verdict = compare(expected, outcome.value, rtol=0, atol=0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Imported now: a submodule of the same name as one of its names (`compare`) would otherwise
# replace that name on the package the moment anything imports the submodule itself.
from coursekit.exec.compare import Comparison, compare
from coursekit.lazy import exports

if TYPE_CHECKING:
    from coursekit.exec.connection import Progress, RunnerError, child_environment
    from coursekit.exec.display import sandbox_note
    from coursekit.exec.runner import Runner, run_programs
    from coursekit.exec.types import Job, Limits, Outcome, Status

# Each public name and the module it lives in: imported when first asked for, so that a
# run needing one table (a status, a type) does not import the whole package.
_HOMES = {
    "sandbox_note": "coursekit.exec.display",
    "Progress": "coursekit.exec.connection",
    "Runner": "coursekit.exec.runner",
    "RunnerError": "coursekit.exec.connection",
    "child_environment": "coursekit.exec.connection",
    "run_programs": "coursekit.exec.runner",
    "Job": "coursekit.exec.types",
    "Limits": "coursekit.exec.types",
    "Outcome": "coursekit.exec.types",
    "Status": "coursekit.exec.types",
}

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


__getattr__ = exports(__name__, _HOMES)
