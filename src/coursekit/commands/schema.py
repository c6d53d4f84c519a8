"""`coursekit schema [--check]`: regenerate schemas/ from the models, or fail if stale."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from coursekit import schemas

# Where coursekit runs only inside pre-commit's environment, `coursekit schema` cannot be typed:
# the published hook writes the files itself, so the advice names both ways.
REGENERATE = (
    "run `coursekit schema` to write them (where coursekit is only a pre-commit hook, "
    "`pre-commit run coursekit-schema --all-files` writes them), then stage schemas/"
)


def run(folder: Path, check_only: bool, out: TextIO, fail_on_write: bool = False) -> int:
    """0: up to date (or written); 1: stale under --check, or written with fail_on_write."""
    if check_only:
        outdated = schemas.stale(folder)
        if outdated:
            out.write(f"{folder}: stale or missing: {', '.join(outdated)}\n{REGENERATE}\n")
            return 1
        out.write(f"{folder}: {len(schemas.rendered())} schemas up to date\n")
        return 0
    written = schemas.write(folder)
    if not written:
        out.write(f"{folder}: already up to date\n")
        return 0
    out.write(f"{folder}: wrote {', '.join(written)}\n")
    if fail_on_write:
        out.write(f"{folder}: stage the schemas written (git add {folder}) and commit again\n")
        return 1
    return 0
