"""`coursekit schema [--check]`: regenerate schemas/ from the models, or fail if stale."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from coursekit import schemas


def run(folder: Path, check_only: bool, out: TextIO) -> int:
    if check_only:
        outdated = schemas.stale(folder)
        if outdated:
            out.write(
                f"{folder}: stale or missing: {', '.join(outdated)}\n"
                "run `coursekit schema` to regenerate\n"
            )
            return 1
        out.write(f"{folder}: {len(schemas.rendered())} schemas up to date\n")
        return 0
    written = schemas.write(folder)
    out.write(
        f"{folder}: wrote {', '.join(written)}\n" if written else f"{folder}: already up to date\n"
    )
    return 0
