"""`coursekit init [DIR]`: start a course repository (see coursekit.authoring.init)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from coursekit.authoring.init import HOOKS_REPOSITORY, InitError, apply, plan


def run(target: Path, title: str, out: TextIO, hooks_repository: str = HOOKS_REPOSITORY) -> int:
    """0: written, or already there; 2: something in the way (nothing written)."""
    try:
        outcome = apply(target, plan(title, hooks_repository))
    except (InitError, OSError) as exc:
        out.write(f"coursekit init: {exc}\n")
        return 2
    if not outcome.written:
        out.write(f"{target}: already a coursekit course; nothing to do\n")
        return 0
    out.write(f"initialised a course in {target}\n")
    for relative in outcome.written:
        out.write(f"  wrote {relative}\n")
    out.write(
        "next: git init (if needed), pre-commit install, then `coursekit check` "
        "and `coursekit new lesson --chapter I.1 --title ... --strand basics`\n"
    )
    return 0
