"""Every rule family, imported explicitly so the registry is complete and its order stable."""

from coursekit.rules import (
    apparatus,  # noqa: F401
    formulas,  # noqa: F401
    maturity,  # noqa: F401
    meta,  # noqa: F401
    notation,  # noqa: F401
    numbers,  # noqa: F401
    problems,  # noqa: F401
    propositions,  # noqa: F401
    quiz,  # noqa: F401
    reading,  # noqa: F401
    references,  # noqa: F401
    structure,  # noqa: F401
)
from coursekit.rules.base import REGISTRY, Context, Finding, Rule, lookup, rule

__all__ = ["REGISTRY", "Context", "Finding", "Rule", "lookup", "rule"]
