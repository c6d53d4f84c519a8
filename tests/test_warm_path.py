"""The warm path: the same bytes as a cold run, and none of the heavy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The language server's libraries: `coursekit lsp` alone pays for them, never `check`.
LSP = ("pygls", "lsprotocol", "cattrs", "coursekit.lsp")

HEAVY = ("sympy", "numpy", "pydantic", "ruamel", "coursekit.rules", "coursekit.load", *LSP)
# What a warm run does not need either: the writer's journal (no interrupted write to finish).
WRITER = ("coursekit.journal",)


def _run(course: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable]
    if importtime:
        command += ["-X", "importtime"]
    command += ["-m", "coursekit", "check", "--course", str(course), *args]
    return subprocess.run(
        command, cwd=course.parent, capture_output=True, text=True, timeout=300, check=False
    )


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _heavy(names: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_warm_output_is_the_cold_output_byte_for_byte(tiny_course: Path, fmt: str) -> None:
    cold = _run(tiny_course, "--format", fmt, "--no-cache")
    first = _run(tiny_course, "--format", fmt)  # fills the cache
    warm = _run(tiny_course, "--format", fmt, importtime=True)
    assert first.stdout == cold.stdout and first.returncode == cold.returncode
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode
    assert not _heavy(_imported(warm.stderr), HEAVY), "the warm run was not a replay"
    assert not _heavy(_imported(warm.stderr), WRITER)


def test_warm_output_with_errors_is_the_cold_output(tiny_course: Path) -> None:
    chapter = tiny_course / "I/1-first/chapter.yaml"
    chapter.write_text(chapter.read_text().replace("maturity: M0", "maturity: M7"))
    cold = _run(tiny_course, "--no-cache")
    assert cold.returncode == 1
    _run(tiny_course)
    warm = _run(tiny_course, importtime=True)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode)
    assert not _heavy(_imported(warm.stderr), HEAVY)


def test_warm_run_of_a_full_course_imports_neither_sympy_nor_numpy(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "ck_generate", Path(__file__).resolve().parent.parent / "benchmarks/generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    course = module.generate(1, tmp_path)
    cold = _run(course)
    warm = _run(course, importtime=True)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode)
    assert not _heavy(_imported(warm.stderr), HEAVY)


def test_cold_check_without_formulas_or_problems_is_lazy(tiny_course: Path) -> None:
    """No formula and no problem in the course: neither sympy nor numpy is ever imported."""
    cold = _run(tiny_course, "--no-cache", importtime=True)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert not _heavy(_imported(cold.stderr), ("sympy", "numpy"))


def test_a_cold_check_never_imports_the_language_server(tiny_course: Path) -> None:
    cold = _run(tiny_course, "--no-cache", importtime=True)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert _imported(cold.stderr), "no import times were recorded"
    assert not _heavy(_imported(cold.stderr), LSP)


def test_the_journal_file_name_is_the_one_the_warm_path_looks_for(tmp_path: Path) -> None:
    from coursekit import journal
    from coursekit.cache_files import CACHE_DIR

    assert journal.journal_path(tmp_path) == tmp_path / CACHE_DIR / "journal.json"
