"""benchmarks/same_output.py: it passes two tools that print the same bytes, and catches any
difference in output or exit code, on the course and on every planted defect.

The two tools are small shell scripts standing in for two coursekit builds, so the test costs
milliseconds per run; the real comparison is `benchmarks/same_output.py --base CHECKOUT`."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "same_output.py"

#: One lesson in which every planted defect of the script finds something to break.
LESSON = """---
formulas:
  scores: Q*K.T
claims:
  - id: grid
    kind: shape
    expr: scores
    shape: [T, d]
  - id: eight
    kind: value
    expr: 2**3
    value: 8
---
The scores are $QK^\\top$.
"""

#: Echoes its arguments, so each command prints something of its own.
SAME = '#!/bin/sh\necho "$@"\n'


def _tool(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _project(tmp_path: Path, lesson: str = LESSON) -> Path:
    project = tmp_path / "project"
    (project / "course" / "lessons").mkdir(parents=True)
    (project / "course" / "lessons" / "one.md").write_text(lesson, encoding="utf-8")
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    return project


def _compare(tmp_path: Path, base_body: str, lesson: str = LESSON) -> tuple[int, str]:
    new = _tool(tmp_path / "new" / "coursekit", SAME)
    _tool(tmp_path / "base" / ".venv" / "bin" / "coursekit", base_body)
    project = _project(tmp_path, lesson)
    args = ["--base", str(tmp_path / "base"), "--new", new, "--course", str(project)]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert (project / "course" / "lessons" / "one.md").read_text(encoding="utf-8") == lesson
    return done.returncode, done.stdout


def test_the_same_bytes_pass(tmp_path: Path) -> None:
    code, out = _compare(tmp_path, SAME)
    assert code == 0, out
    assert "DIFFERS" not in out
    assert "25 of 25 runs print the same bytes and exit codes" in out


def test_a_different_output_or_exit_code_fails_and_is_shown(tmp_path: Path) -> None:
    differs = (
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  "owed --no-cache --format json") echo "{}"; exit 0 ;;\n'
        '  "rules") echo "$@"; exit 2 ;;\n'
        "esac\n"
        'echo "$@"\n'
    )
    code, out = _compare(tmp_path, differs)
    assert code == 1, out
    assert "DIFFERS  coursekit owed --no-cache --format json" in out
    assert "-{}" in out and "+owed --no-cache --format json" in out  # base -, this +
    assert "DIFFERS  coursekit rules" in out and "exit code: this 0, base 2" in out
    assert "23 of 25 runs" in out


def test_a_defect_that_matches_nothing_is_not_a_pass(tmp_path: Path) -> None:
    code, out = _compare(tmp_path, SAME, lesson="---\n---\nNo maths at all.\n")
    assert code == 1, out
    assert "nothing matched: the defect was not planted" in out
