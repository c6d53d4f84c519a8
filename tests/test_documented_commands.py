"""Every command the README and docs/ show runs as written, or is listed here with the reason.

Commands are the lines of ```console blocks (`$ ...`) and ```sh blocks, and the inline
`coursekit ...` spans of the prose. Each coursekit command runs in its own copy of this
repository's course, in-process through the click entry point (with schemas/ and the [tool.coursekit] settings), so one that writes
cannot change what the next one sees; a warm cache is copied along so that the checks stay
fast. A new command in the docs that is neither runnable here nor listed below fails the test.
(Inline commands of other tools, `git tag ...` or `pre-commit autoupdate`, are not extracted.)
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from helpers import coursekit_tables

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`(coursekit [^`]+)`(?!`)")
# A synopsis rather than a command: placeholders in capitals, alternatives, optional parts.
SYNOPSIS = re.compile(r"\b[A-Z]{3,}\b|[|\[\]<>…]|\.\.\.")

# Commands not run here, each with the reason. Matched by prefix.
NOT_RUN = {
    "python3 -m venv .venv": "creates a virtualenv and installs coursekit: this suite runs in "
    "that very install (.ci/run runs the README's test line from a clean clone)",
    ".venv/bin/pip install": "installs the dev extras; test_ci_workflow.py checks that the "
    "extras named exist",
    "python benchmarks/": "a benchmark takes minutes of the shared machine's two cores; run by hand",
    "coursekit daemon": "starts a process that outlives the command: tests/test_daemon.py runs "
    "start, status and stop end to end, each in a copy of the course",
    ".venv/bin/python benchmarks/": "a benchmark takes minutes of the shared machine's two "
    "cores; run by hand",
    ".venv/bin/python tests/browser/screenshots.py": "rewrites the reference screenshots; "
    "tests/browser renders the same page and compares it with them",
    ".venv/bin/pre-commit ": "pre-commit itself: tests/e2e/test_adopt.py and test_precommit.py "
    "run it in scratch repositories",
}
# Inline mentions of a command by name (its synopsis is in a table nearby), not invocations.
MENTIONS = {"coursekit new", "coursekit fix"}
# Documented to fail: the command and the exit code the docs give it.
EXPECTED = {"coursekit check README.md": 2}


def documented() -> list[tuple[str, str]]:
    """(document, command) for every command shown, in order."""
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(REPO).as_posix()
        for block in FENCE.finditer(text):
            lang, body = block.group(1), block.group(2)
            lines = body.splitlines()
            if lang == "console":
                commands = [line[2:] for line in lines if line.startswith("$ ")]
            elif lang in ("sh", "bash", "shell"):
                commands = [line for line in lines if line.strip() and not line.startswith("#")]
            else:
                continue
            found += [(name, command.split("  #")[0].strip()) for command in commands]
        prose = FENCE.sub("", text)
        found += [(name, match.group(1)) for match in INLINE.finditer(prose)]
    return found


def reason_not_run(command: str) -> str | None:
    for prefix, reason in NOT_RUN.items():
        if command.startswith(prefix):
            return reason
    if command in MENTIONS:
        return "the command's name in prose"
    if SYNOPSIS.search(command.removeprefix("coursekit ")):
        return "a synopsis with placeholders"
    return None


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("documented") / "repo"
    root.mkdir()
    shutil.copytree(REPO / "course", root / "course")
    shutil.copytree(REPO / "schemas", root / "schemas")
    config = coursekit_tables((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    if config:
        (root / "pyproject.toml").write_text(config, encoding="utf-8")
    code, output = run(root, "coursekit check")
    assert code == 0, output
    return root


def run(cwd: Path, command: str) -> tuple[int, str]:
    """The command in-process (as `coursekit` would run it), from `cwd`: exit code, output."""
    words = shlex.split(command)
    assert words[0] == "coursekit", command
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, words[1:])
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_the_docs_show_commands_and_every_one_is_run_or_explained() -> None:
    commands = documented()
    assert len(commands) > 20
    unexplained = [
        (doc, command)
        for doc, command in commands
        if not command.startswith("coursekit ") and reason_not_run(command) is None
    ]
    assert not unexplained, (
        f"add these to NOT_RUN with a reason, or make them runnable: {unexplained}"
    )


def test_the_readme_shows_init_first() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    using = text[text.index("## Using it") :]
    first = next(line for line in using.splitlines() if line.startswith("$ "))
    assert first.startswith("$ coursekit init")


def test_every_documented_coursekit_command_runs_as_written(template: Path, tmp_path: Path) -> None:
    seen: set[str] = set()
    failures: list[str] = []
    for doc, command in documented():
        if not command.startswith("coursekit ") or command in seen:
            continue
        seen.add(command)
        if reason_not_run(command) is not None:
            continue
        copy = tmp_path / f"run{len(seen)}"
        if command.startswith("coursekit init"):
            copy.mkdir()  # init starts a repository: it refuses to write over a course
        else:
            shutil.copytree(template, copy)
        code, output = run(copy, command)
        expected = EXPECTED.get(command, 0)
        if code != expected:
            failures.append(f"{doc}: `{command}` exited {code}, not {expected}:\n{output[-1500:]}")
    assert len(seen) > 15
    assert not failures, "\n\n".join(failures)
