"""The GitHub workflow cannot run here, so every command it names is checked against this tree.

Each `run:` line is split into commands; a `coursekit` command must name subcommands and options
that exist (its `--help` exits 0), `pip install -e '.[extra]'` must name extras pyproject
declares, and the test command must be the one `.ci/run` runs. A command of any other kind
fails the test until a case is added for it here.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml  # type: ignore[import-untyped]
from click.testing import CliRunner

from coursekit.cli import main
from coursekit.report import REPORTERS

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "course.yml"
CI_RUN = REPO / ".ci" / "run"


Command = list[str]


def load_workflow() -> dict[Any, Any]:
    document: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return document


def steps() -> list[dict[str, Any]]:
    return [step for job in load_workflow()["jobs"].values() for step in job["steps"]]


def split_commands(script: str) -> Iterator[Command]:
    """The simple commands of a `run:` script, without redirections."""
    script = script.replace("\\\n", " ")
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        command: Command = []
        words = list(lexer)
        index = 0
        while index < len(words):
            word = words[index]
            if word in {"&&", "||", ";", "|"}:
                if command:
                    yield command
                command = []
            elif word in {">", ">>", "<", "2>", "2>>"}:
                index += 1  # skip the redirection's target
            else:
                command.append(word)
            index += 1
        if command:
            yield command


def run_commands() -> list[Command]:
    return [command for step in steps() if "run" in step for command in split_commands(step["run"])]


def find(kind: str) -> list[Command]:
    return [c for c in run_commands() if c[0] == kind or c[:3] == ["python", "-m", kind]]


def test_the_workflow_parses_and_names_its_steps() -> None:
    workflow = load_workflow()
    triggers = workflow["on" if "on" in workflow else True]  # YAML 1.1 reads `on` as true
    assert {"push", "pull_request"} <= set(triggers)
    uses = [step["uses"].split("@")[0] for step in steps() if "uses" in step]
    assert uses == ["actions/checkout", "actions/setup-python", "actions/upload-artifact"]
    setup = next(step for step in steps() if step.get("uses", "").startswith("actions/setup"))
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={setup['with']['python-version']}"


def test_every_command_is_of_a_known_kind() -> None:
    for command in run_commands():
        assert command[0] in {"pip", "coursekit"} or command[:3] == ["python", "-m", "pytest"], (
            f"no check for {shlex.join(command)!r}: add one to {Path(__file__).name}"
        )


def test_split_commands() -> None:
    script = 'coursekit owed --format markdown >> "$GITHUB_STEP_SUMMARY"\na && b --x \\\n  y'
    assert list(split_commands(script)) == [
        ["coursekit", "owed", "--format", "markdown"],
        ["a"],
        ["b", "--x", "y"],
    ]


def test_the_dashboard_the_workflow_writes_is_the_artifact_it_uploads() -> None:
    (upload,) = [step for step in steps() if step.get("uses", "").startswith("actions/upload")]
    written = [
        c[c.index("--output-file") + 1]
        for c in coursekit_commands()
        if c[1] == "owed" and "--output-file" in c and c[c.index("--format") + 1] == "html"
    ]
    assert written == [upload["with"]["path"]]
    order = steps()
    writer = next(i for i, step in enumerate(order) if written[0] in step.get("run", ""))
    assert writer < order.index(upload)
    assert "!cancelled()" in upload["if"]  # uploaded even when the check above failed


def test_pip_installs_this_project_with_declared_extras() -> None:
    (command,) = find("pip")
    assert command[:3] == ["pip", "install", "-e"]
    match = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", command[3])
    assert match, command
    extras = (match.group(1) or "").split(",") if match.group(1) else []
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(extras) <= set(declared)
    assert "test" in extras, "the tests need the test extra (pytest, jsonschema, pre-commit)"


def resolve(command: Command) -> tuple[list[str], click.Command, list[str]]:
    """Walk the click tree: (subcommand path, the command, the remaining words)."""
    path: list[str] = []
    current: click.Command = main
    words = command[1:]
    ctx = click.Context(main)
    while isinstance(current, click.Group) and words and not words[0].startswith("-"):
        sub = current.get_command(ctx, words[0])
        if sub is None:
            missing = " ".join([*path, words[0]])
            pytest.fail(f"`coursekit {missing}` does not exist (workflow: {shlex.join(command)})")
        path.append(words[0])
        current = sub
        words = words[1:]
    return path, current, words


def options_of(command: click.Command) -> dict[str, click.Parameter]:
    return {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in [*param.opts, *param.secondary_opts]
    }


def coursekit_commands() -> list[Command]:
    commands = find("coursekit")
    assert commands, "the workflow runs no coursekit command"
    return commands


@pytest.mark.parametrize("command", coursekit_commands(), ids=shlex.join)
def test_coursekit_commands_exist(command: Command) -> None:
    path, target, words = resolve(command)
    help_run = CliRunner().invoke(main, [*path, "--help"])
    assert help_run.exit_code == 0, help_run.output
    options = options_of(target)
    while words:
        word, words = words[0], words[1:]
        if not word.startswith("-"):
            continue  # an argument (PATHS)
        name, _, inline = word.partition("=")
        assert name in options, f"`coursekit {' '.join(path)}` has no option {name}"
        param = options[name]
        if isinstance(param, click.Option) and param.is_flag:
            continue
        value = inline or (words.pop(0) if words else "")
        assert value, f"{name} needs a value"
        if isinstance(param.type, click.Choice):
            assert value in param.type.choices, f"{name} {value}: not a choice"
        if path == ["check"] and name == "--format":
            assert value in REPORTERS


def test_check_runs_with_the_github_format_under_actions() -> None:
    """The workflow relies on `coursekit check` choosing `--format github` by itself."""
    (check,) = [c for c in coursekit_commands() if c[1] == "check"]
    assert "--format" not in check and "github" in REPORTERS


def pytest_invocation(command: Command) -> Command:
    """`python -m pytest ARGS` from any interpreter path, as ["-m", "pytest", ARGS...]."""
    index = command.index("-m")
    assert command[index + 1] == "pytest"
    return command[index:]


def test_the_test_command_is_the_one_ci_runs() -> None:
    (workflow_tests,) = find("pytest")
    if not CI_RUN.is_file():
        pytest.skip(".ci/run is absent: nothing to compare the workflow's test command with")
    ci_tests = [
        command
        for command in split_commands(CI_RUN.read_text(encoding="utf-8"))
        if "-m" in command and "pytest" in command
    ]
    assert len(ci_tests) == 1, f".ci/run has {len(ci_tests)} pytest invocations"
    (ci_test,) = ci_tests
    assert Path(ci_test[0]).name.startswith("python"), ci_test
    assert pytest_invocation(workflow_tests) == pytest_invocation(ci_test)
