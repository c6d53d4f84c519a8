"""A lesson file named with bytes that are not UTF-8: every format prints valid UTF-8, exit codes
as usual, even where stdout is strict UTF-8 (any locale but C/POSIX)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CH, LESSON

STRAY = os.fsdecode(b"t\xffx.md")  # a lesson file no manifest lists: CK110 names it


def run(project: Path, fmt: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "COURSEKIT_DEBUG": ""}
    done = subprocess.run(
        [sys.executable, "-m", "coursekit", "check", "--no-exec", "--format", fmt],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert b"internal error" not in done.stderr, done.stderr
    return done.returncode, done.stdout.decode("utf-8")  # strict: fails on invalid UTF-8


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_every_format_prints_valid_utf8_for_a_non_utf8_file_name(project: Path, fmt: str) -> None:
    (project / CH / "lessons" / STRAY).write_bytes((project / LESSON).read_bytes())
    code, out = run(project, fmt)
    assert code == 0  # CK110 is a warning
    assert "t\ufffdx" in out
    if fmt == "json":
        [found] = [d for d in json.loads(out)["diagnostics"] if d["code"] == "CK110"]
        assert found["path"] == f"{CH}/lessons/t\ufffdx.md" and found["line"] == 1
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert f"{CH}/lessons/t%FFx.md" in uris  # the exact bytes, percent-encoded
