"""The import contracts in pyproject.toml ([tool.importlinter]) hold, and would catch a back-import.

`lint-imports` reads the package through the import system, so a planted copy is found first by
putting its folder on PYTHONPATH (ahead of the editable install)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
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
    assert "3 kept, 0 broken" in result.stdout


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
        # how a symbol is spelled reaching back for the reader of symbols it was split from
        ("latex_names.py", "from coursekit import latex_symbols", "coursekit.latex_names"),
        # inside verify: what a shape is asking for one lesson's shapes, the plain data for a run
        ("verify/shape_model.py", "from coursekit.verify import shapes", "verify.shape_model"),
        ("verify/spec.py", "from coursekit.verify import runner", "coursekit.verify.spec"),
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


def _documented_layers() -> list[list[str]]:
    """The first column of docs/architecture.md's layer table: module names, top to bottom."""
    rows = []
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            first = line.split(" | ")[0].removeprefix("| ")
            rows.append(sorted(re.findall(r"`([a-z_]+)`", first)))
    return rows


def test_the_architecture_page_lists_the_layers_of_the_contract() -> None:
    # The page a newcomer reads first must not drift from what lint-imports enforces.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = config["tool"]["importlinter"]["contracts"][0]
    layers = [sorted(name.strip() for name in layer.split("|")) for layer in contract["layers"]]
    assert _documented_layers() == layers
