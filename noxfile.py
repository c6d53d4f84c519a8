"""nox sessions: tests, lint, typecheck, course (the bundled course must pass its own check)."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck", "course"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".", "mypy")
    session.run("mypy", "--strict", "src")


@nox.session
def course(session: nox.Session) -> None:
    session.install("-e", ".")
    session.run("coursekit", "check")
    session.run("coursekit", "schema", "--check")
