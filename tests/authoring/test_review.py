"""Review findings on `coursekit new` and `coursekit fix`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursekit.cli import main

from .conftest import II2


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("kind", "title", "slug", "name"),
    [
        ("problem", r"Cost of \underline{x}", "cost-of-underline-x", "problems"),
        ("problem", 'The """ trap', "the-trap", "problems"),
        ("exercise", "Ends in a backslash \\", "ends-in-a-backslash", "exercises"),
    ],
)
def test_the_scaffolded_program_compiles_whatever_the_title(
    project_dir: Path, kind: str, title: str, slug: str, name: str
) -> None:
    extra = ["--program"] if kind == "exercise" else []
    code, out = run("new", kind, "--chapter", "II.2", "--title", title, *extra)
    assert code == 0, out
    program = project_dir / II2 / name / slug / "solution.py"
    tree = ast.parse(program.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree)
    assert docstring is not None and docstring.startswith(f"Solution program for: {title}.")
