"""`coursekit explain CODE` and `coursekit rules`."""

from __future__ import annotations

from typing import TextIO

from coursekit.rules import REGISTRY, lookup


def explain(selector: str, out: TextIO) -> int:
    matches = lookup(selector)
    if not matches:
        out.write(f"coursekit: no rule matches '{selector}' (see `coursekit rules`)\n")
        return 2
    for index, rule in enumerate(matches):
        if index:
            out.write("\n" + "-" * 72 + "\n\n")
        fix = " (fixable)" if rule.fixable else ""
        out.write(f"{rule.title} · {rule.family} · {rule.severity}{fix}\n\n{rule.doc}\n")
    return 0


def list_rules(out: TextIO) -> int:
    width = max((len(rule.name) for rule in REGISTRY.values()), default=10)
    family = ""
    for rule in sorted(REGISTRY.values(), key=lambda r: r.code):
        if rule.family != family:
            family = rule.family
            out.write(f"\n{family}\n")
        fix = "fix" if rule.fixable else "   "
        out.write(
            f"  {rule.code}  {rule.name:<{width}}  {rule.severity:<7}  {fix}  {rule.summary}\n"
        )
    return 0
