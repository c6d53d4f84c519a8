"""The import contracts in pyproject.toml ([tool.importlinter]) hold, and would catch a back-import.

`lint-imports` reads the package through the import system, so a planted copy is found first by
putting its folder on PYTHONPATH (ahead of the editable install)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(project: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A copy of the package and its pyproject.toml, for planting imports in."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "coursekit",
        tmp_path / "src" / "coursekit",
        ignore=shutil.ignore_patterns("__pycache__", "templates"),
    )
    return tmp_path


def test_the_contracts_hold_on_the_package() -> None:
    result = _lint_imports(ROOT, ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_the_copy_is_what_is_checked(planted: Path) -> None:
    # Without this, a planted import could pass because the installed package was read instead.
    result = _lint_imports(planted, planted / "src")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "planted_import", "broken"),
    [
        # the leaf configuration validating names against the rules again (the old circle)
        ("config.py", "from coursekit.rules import REGISTRY", "coursekit.config"),
        # loading asking the engine, a layer above it
        ("load/loader.py", "from coursekit import engine", "coursekit.load"),
        # the data model reaching for a command
        ("model/base.py", "import coursekit.commands.check", "coursekit.model"),
        # a rule importing the editor protocol
        ("rules/meta.py", "import lsprotocol.types", "coursekit.rules"),
    ],
)
def test_a_planted_back_import_breaks_a_contract(
    planted: Path, module: str, planted_import: str, broken: str
) -> None:
    path = planted / "src" / "coursekit" / module
    path.write_text(path.read_text() + f"\n{planted_import}  # planted\n")
    result = _lint_imports(planted, planted / "src")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 broken" in result.stdout
    assert broken in result.stdout
