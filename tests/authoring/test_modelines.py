"""Every yaml-language-server modeline in docs, scaffolds and the bundled course resolves."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from coursekit.cli import main
from helpers import copy_golden

REPO = Path(__file__).resolve().parents[2]
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)
# Any spelling an editor would not recognise (no colon, another key): reported, not skipped.
LOOSE = re.compile(r"yaml-language-server(?!: \$schema=)")


def modeline_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    assert not LOOSE.search(text), f"{path}: malformed modeline"
    found = MODELINE.search(text)
    assert found, f"{path}: no modeline"
    return found.group(1)


def test_the_docs_modeline_resolves_from_a_chapter() -> None:
    text = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
    targets = [m.group(1) for m in re.finditer(r"yaml-language-server: \$schema=(\S+?)`", text)]
    assert targets
    (chapter,) = REPO.glob("course/I/1-*/chapter.yaml")
    for target in targets:
        kind = target.rsplit("/", 1)[-1].split(".")[0]
        example = next(REPO.glob(f"course/**/{kind}.yaml"))
        assert (example.parent / target).resolve() == REPO / "schemas" / f"{kind}.schema.json"
    assert chapter.is_file()


def test_the_bundled_course_modelines_resolve() -> None:
    yamls = list((REPO / "course").rglob("*.yaml"))
    assert yamls
    for path in yamls:
        assert (path.parent / modeline_of(path)).resolve().is_file(), path


def test_every_file_new_writes_carries_a_modeline_that_resolves(tmp_path: Path) -> None:
    root = copy_golden(tmp_path).parent
    (root / "schemas").mkdir(exist_ok=True)
    assert CliRunner().invoke(main, ["schema", "--dir", str(root / "schemas")]).exit_code == 0
    commands = [
        ["new", "book", "--title", "Another book"],
        ["new", "problem", "--chapter", "I.1", "--title", "Count the steps"],
        ["new", "exercise", "--chapter", "I.1", "--title", "Sum the rows"],
        ["new", "exercise", "--chapter", "I.1", "--title", "Run the rows", "--program"],
    ]
    made: list[Path] = []
    for args in commands:
        before = set(root.rglob("*.yaml"))
        result = CliRunner().invoke(main, [*args, "--course", str(root / "course")])
        assert result.exit_code == 0, result.output
        made += sorted(set(root.rglob("*.yaml")) - before)
    assert {p.name for p in made} == {"book.yaml", "problem.yaml", "exercise.yaml"}
    for path in made:
        assert (path.parent / modeline_of(path)).resolve().is_file(), path
