"""Shared test helpers: a copy of the golden course, exact edits, an in-process check.

course = copy_golden(tmp_path)
edit(course / CHAPTER, "maturity: M0", "maturity: M1")
codes = {d.code for d in run_check(course)}
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coursekit.diagnostics import Diagnostic
from coursekit.engine import check
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.store import MemoryStore

GOLDEN = Path(__file__).resolve().parent / "golden" / "course"
CHAPTER = "I/1-first-steps/chapter.yaml"
LESSON = "I/1-first-steps/lessons/tokens.md"
BOOK0 = "0/book.yaml"
COURSE = "course.yaml"
PROBLEM = "I/1-first-steps/problems/count-tokens/problem.yaml"
EXERCISE = "I/1-first-steps/exercises/first-token/exercise.yaml"


def copy_golden(tmp_path: Path) -> Path:
    """A fresh copy of the golden course at tmp_path/course; returns that folder."""
    target = tmp_path / "course"
    shutil.copytree(GOLDEN, target)
    return target


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of `old` in the file (fails loudly if it is not exactly once)."""
    text = path.read_text(encoding="utf-8")
    count = text.count(old)
    assert count == 1, f"{path.name}: expected exactly one {old!r}, found {count}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not found in {path}")


VERDICTS: dict[tuple[str, str], Any] = {}  # this test process's sympy verdicts, by key


class SharedVerdicts(MemoryStore):
    """Sympy verdicts shared by every in-process check of one test process; all else per run.

    A verdict's key is the digest of everything it depends on (the lesson's maths, its
    notation, the limits), exactly as in `.coursekit_cache/`: a planted defect changes the key
    and is verified afresh, while the untouched lessons of the copied course are not verified
    forty times over. Tests of the verifier itself pass `fresh=True`.
    """

    SHARED = frozenset({"sympy", "sympy-displays", "sympy-parts"})

    def __init__(self) -> None:
        super().__init__()
        self._kept = VERDICTS

    def get(self, namespace: str, key: str) -> Any | None:
        if namespace in self.SHARED and (namespace, key) in self._kept:
            return self._kept[(namespace, key)]
        return super().get(namespace, key)

    def put(self, namespace: str, key: str, value: Any) -> None:
        if namespace in self.SHARED:
            self._kept[(namespace, key)] = value
        super().put(namespace, key, value)


def run_check(
    course_dir: Path,
    paths: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    fresh: bool = False,
) -> list[Diagnostic]:
    """`coursekit check` in process (without running problem programs unless asked).

    Unless `fresh`, sympy verdicts come from this process's earlier checks of the same maths."""
    project = find_project(course_dir, course_dir)
    store = MemoryStore() if fresh else SharedVerdicts()
    opts = Options(**{"exec": False, **(options or {})})
    return check(project, paths, options=opts, store=store).diagnostics


@dataclass(frozen=True)
class Case:
    """One broken copy of the golden course: edits, then the code expected on a line."""

    code: str
    file: str  # relative to the course folder: where the diagnostic must be
    edits: Sequence[tuple[str, str, str]]  # (file, old, new)
    needle: str  # the expected line is the first line of `file` containing this
    at: str | None = None  # if given, the column is where this text starts on that line
    setup: Callable[[Path], None] | None = None

    @property
    def id(self) -> str:
        return f"{self.code}-{self.needle[:24]}"


def assert_case(tmp_path: Path, case: Case) -> list[Diagnostic]:
    course = copy_golden(tmp_path)
    for file, old, new in case.edits:
        edit(course / file, old, new)
    if case.setup is not None:
        case.setup(course)
    diagnostics = run_check(course)
    expected_path = f"course/{case.file}"
    line = line_of(course / case.file, case.needle)
    hits = [d for d in diagnostics if d.code == case.code and d.path == expected_path]
    shown = "\n".join(f"{d.path}:{d.line}:{d.column} {d.code} {d.message}" for d in diagnostics)
    assert any(d.line == line for d in hits), (
        f"expected {case.code} at {expected_path}:{line}; got:\n{shown}"
    )
    if case.at is not None:
        text = (course / case.file).read_text(encoding="utf-8").split("\n")[line - 1]
        column = text.index(case.at) + 1
        assert any(d.line == line and d.column == column for d in hits), (
            f"expected {case.code} at column {column}; got:\n{shown}"
        )
    return diagnostics


def coursekit_tables(pyproject: str) -> str:
    """The `[tool.coursekit*]` tables of a pyproject.toml, copied as they are written."""
    kept: list[str] = []
    keep = False
    for line in pyproject.splitlines():
        if line.startswith("["):
            keep = line.strip("[] \t").startswith("tool.coursekit")
        if keep:
            kept.append(line)
    return "\n".join(kept) + "\n" if kept else ""


def generate(chapters: int, root: Path) -> Path:
    """benchmarks/generate.py's synthetic course of `chapters` chapters, written under `root`
    (its course folder returned): a course whose every chapter has lessons, problems and
    exercises, as the benchmarks measure."""
    import importlib.util

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "generate.py"
    spec = importlib.util.spec_from_file_location("ck_generate", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    course: Path = module.generate(chapters, root)
    return course


def pack_folder(project: Path) -> Path:
    """Where this environment's pack is kept for the project (`cache_sweep`'s generation)."""
    from coursekit.cache import DiskStore

    return DiskStore(project).generation
