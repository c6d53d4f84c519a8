"""Every rule family, imported explicitly so the registry is complete and its order stable."""

from coursekit.rules import meta, structure  # noqa: F401
from coursekit.rules.base import REGISTRY, Context, Finding, Rule, lookup, rule

__all__ = ["REGISTRY", "Context", "Finding", "Rule", "lookup", "rule"]
