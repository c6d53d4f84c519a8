"""Tests write only in temporary folders: what a run left in the checkout that git does not track.

Tool caches (pytest's, Python's bytecode, mypy's, ruff's, import-linter's, Hypothesis') are
expected and not counted; anything else new, ignored or not, is a test writing where it should not.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

TOOL_CACHES = (
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".import_linter_cache",
    ".hypothesis",
    ".venv",
    ".nox",
)


def untracked(root: Path) -> set[str] | None:
    """Files under root that git does not track (ignored ones included), or None outside git."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--directory", "--no-empty-directory", "-z"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = {name for name in listed.decode("utf-8", "replace").split("\0") if name}
    return {name for name in names if not _is_tool_cache(name)}


def _is_tool_cache(name: str) -> bool:
    parts = Path(name).parts
    return any(part in TOOL_CACHES or part.endswith(".egg-info") for part in parts)
