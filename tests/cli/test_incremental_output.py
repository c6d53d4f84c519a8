"""What a check that kept most chapters' findings prints is byte for byte what a run from
nothing prints (`--no-cache`), in text and in JSON, after each kind of edit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main

BUNDLED = Path(__file__).resolve().parents[2] / "course"
LESSON = "II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"
FORMATS = ("text", "json")
DECLARED = "  - symbol: 'T'\n    meaning: a length\n    assume: [positive]\n"


def _check(root: Path, *extra: str) -> dict[str, tuple[int, str]]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        out = {}
        for name in FORMATS:
            result = CliRunner().invoke(main, ["check", "--no-exec", "--format", name, *extra])
            assert result.exit_code in (0, 1), result.output
            out[name] = (result.exit_code, result.output)
        return out
    finally:
        os.chdir(cwd)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.slow
def test_an_incremental_run_prints_what_a_cold_run_prints(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    _check(tmp_path)  # fills the cache
    lesson = course / LESSON
    edits = [
        (lesson, "of that kind.\n", "of that kind.\n\nIt costs 524,289 multiplications.\n"),
        (lesson, "    value: 524288", "    value: 524289"),  # a claim's value
        (course / "0/book.yaml", "Vectors, matrices and the matrix product", "Vectors"),  # Book 0
        (course / "course.yaml", "  - symbol: 'O'\n", DECLARED + "  - symbol: 'O'\n"),
    ]
    for path, old, new in edits:
        _edit(path, old, new)
        kept = _check(tmp_path)
        assert kept == _check(tmp_path, "--no-cache"), (path, old)
    assert kept["text"][0] == 1 and "CK804" in kept["text"][1]
