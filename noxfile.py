"""nox sessions: tests, lint, typecheck, course (the bundled course must pass its own check);
`fuzz` (not run by default): many more mutated courses than the normal test run does."""

from __future__ import annotations

import os
import tempfile

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "course"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    # import-linter reads the package through the import system: it must be installed
    session.install("-e", ".", "ruff", "import-linter")
    session.run("ruff", "check", "src", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "noxfile.py")
    session.run("lint-imports")  # the layers in pyproject.toml [tool.importlinter]


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[test]", "mypy")  # the tests' imports (pytest, pygls, …) typed too
    session.run("mypy", "--strict", "src", "tests")


@nox.session
def course(session: nox.Session) -> None:
    session.install("-e", ".")
    session.run("coursekit", "check")
    session.run("coursekit", "schema", "--check")


@nox.session
def fuzz(session: nox.Session) -> None:
    """`nox -s fuzz [-- CASES [SEED]]`: tests/fuzz with 10,000 cases by default, then its figures."""
    session.install("-e", ".[test]")
    cases = session.posargs[0] if session.posargs else "10000"
    seed = session.posargs[1] if len(session.posargs) > 1 else "19"
    report = os.path.join(tempfile.mkdtemp(prefix="coursekit-fuzz-"), "report.jsonl")
    env = {
        "COURSEKIT_FUZZ_CASES": cases,
        "COURSEKIT_FUZZ_SEED": seed,
        "COURSEKIT_FUZZ_SHARDS": "40",
    }
    env["COURSEKIT_FUZZ_REPORT"] = report
    try:
        session.run(
            "python",
            "-m",
            "pytest",
            "tests/fuzz",
            "-q",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "-k",
            "never_crash",
            env=env,
        )
    finally:
        session.run("python", "tests/fuzz/summary.py", report)
