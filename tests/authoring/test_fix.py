"""`coursekit fix`: safe renumbering and ids, comments kept, idempotent, `--diff` writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coursekit.authoring.yamledit import YamlEditor
from coursekit.load.yamlparse import parse_yaml

from .conftest import II2, changed_lines, run, snapshot

LESSON = f"{II2}/lessons/goodbye-to-recurrence.md"
SECOND = """\
  # A second proposition, numbered 3 by mistake; this comment must survive.
  - number: 3   # was 2 in an earlier draft
    claim: The grid is cheaper than the chain exactly when the sequence is shorter than the model is wide.
    gloss: >-
      Counted in multiplications, the grid costs T/d times the chain (see the lesson).

"""


def _break_numbering(root: Path) -> tuple[str, str]:
    chapter = root / II2 / "chapter.yaml"
    text = chapter.read_text(encoding="utf-8")
    assert "\nfigures:\n" in text
    text = text.replace("\nfigures:\n", "\n" + SECOND + "figures:\n", 1)
    chapter.write_text(text, encoding="utf-8")
    lesson = root / LESSON
    body = lesson.read_text(encoding="utf-8")
    body += "\nAs [Prop. 3](prop:3) says, and II.2 Prop. 3 repeats, the trade has two sides.\n"
    lesson.write_text(body, encoding="utf-8")
    return text, body


def test_two_propositions_numbered_1_and_3_become_1_and_2_keeping_every_comment(
    project_dir: Path,
) -> None:
    chapter_before, lesson_before = _break_numbering(project_dir)
    _code, out = run("fix")
    assert "Fixed" in out, out
    chapter_after = (project_dir / II2 / "chapter.yaml").read_text(encoding="utf-8")
    assert changed_lines(chapter_before, chapter_after) == [
        (
            "  - number: 3   # was 2 in an earlier draft\n",
            "  - number: 2   # was 2 in an earlier draft\n",
        )
    ]
    numbers = [p["number"] for p in parse_yaml(chapter_after, "c")[0]["propositions"]]
    assert numbers == [1, 2]
    for line in chapter_before.splitlines():
        if line.lstrip().startswith("#"):
            assert line in chapter_after.splitlines()
    lesson_after = (project_dir / LESSON).read_text(encoding="utf-8")
    assert changed_lines(lesson_before, lesson_after) == [
        (
            "As [Prop. 3](prop:3) says, and II.2 Prop. 3 repeats, the trade has two sides.\n",
            "As [Prop. 2](prop:2) says, and II.2 Prop. 2 repeats, the trade has two sides.\n",
        )
    ]


def test_fix_twice_changes_nothing_the_second_time(project_dir: Path) -> None:
    _break_numbering(project_dir)
    run("fix")
    once = snapshot(project_dir)
    _code, out = run("fix")
    assert snapshot(project_dir) == once
    assert "Fixed" not in out
    _code, out = run("fix", "--diff")
    assert "@@" not in out
    assert snapshot(project_dir) == once


def test_diff_shows_the_fix_writes_nothing_and_exits_1(project_dir: Path) -> None:
    _break_numbering(project_dir)
    before = snapshot(project_dir)
    code, out = run("fix", "--diff")
    assert code == 1
    assert (
        "-  - number: 3   # was 2 in an earlier draft\n+  - number: 2   # was 2 in an earlier draft\n"
        in out
    )
    assert f"--- a/{LESSON}" in out
    assert snapshot(project_dir) == before


def test_nothing_to_fix_on_the_real_course(project_dir: Path) -> None:
    before = snapshot(project_dir)
    _code, out = run("fix", "--diff")
    assert "@@" not in out
    assert snapshot(project_dir) == before


def test_figures_are_renumbered_with_their_links(project_dir: Path) -> None:
    chapter = project_dir / II2 / "chapter.yaml"
    text = chapter.read_text(encoding="utf-8").replace(
        "  - number: 2\n    title: Four architectures",
        "  - number: 7\n    title: Four architectures",
    )
    chapter.write_text(text, encoding="utf-8")
    lesson = project_dir / LESSON
    body = lesson.read_text(encoding="utf-8").replace("[Fig. 2](fig:2)", "[Fig. 7](fig:7)")
    lesson.write_text(body, encoding="utf-8")
    run("fix")
    assert "  - number: 2\n    title: Four architectures" in chapter.read_text(encoding="utf-8")
    assert "[Fig. 2](fig:2)" in lesson.read_text(encoding="utf-8")
    assert "fig:7" not in lesson.read_text(encoding="utf-8")


def test_an_ambiguous_reference_blocks_the_renumbering(project_dir: Path) -> None:
    _break_numbering(project_dir)
    lesson = project_dir / LESSON
    lesson.write_text(
        lesson.read_text(encoding="utf-8") + "\nSee [Prop. 2](prop:2).\n", encoding="utf-8"
    )
    before = snapshot(project_dir)
    code, out = run("fix")
    assert "not renumbered" in out and code == 1
    assert snapshot(project_dir) == before


def test_chapter_id_that_disagrees_with_its_folder_is_normalised(project_dir: Path) -> None:
    chapter = project_dir / II2 / "chapter.yaml"
    text = chapter.read_text(encoding="utf-8").replace("\nid: II.2\n", "\nid: II.7   # typo\n")
    chapter.write_text(text, encoding="utf-8")
    run("fix")
    after = chapter.read_text(encoding="utf-8")
    assert changed_lines(text, after) == [("id: II.7   # typo\n", "id: II.2   # typo\n")]


def test_a_file_with_yaml_errors_is_never_rewritten(project_dir: Path) -> None:
    _break_numbering(project_dir)
    problem = project_dir / II2 / "problems" / "broken" / "problem.yaml"
    problem.parent.mkdir(parents=True)
    broken = "title: [unclosed\nsupports: [3]\n"
    problem.write_text(broken, encoding="utf-8")
    chapter = project_dir / II2 / "chapter.yaml"
    editor = YamlEditor(chapter.read_text(encoding="utf-8"))
    editor.append(("problems",), "broken")
    chapter.write_text(editor.text, encoding="utf-8")
    code, _ = run("fix")
    assert problem.read_text(encoding="utf-8") == broken
    assert code == 1  # the YAML error remains


def test_a_fix_whose_rule_is_ignored_in_the_config_does_not_run(project_dir: Path) -> None:
    (project_dir / "pyproject.toml").write_text(
        '[tool.coursekit]\nignore = ["proposition-numbering"]\n', encoding="utf-8"
    )
    _break_numbering(project_dir)
    before = snapshot(project_dir)
    run("fix")
    assert snapshot(project_dir) == before
    assert "@@" not in run("fix", "--diff")[1]


def test_renumbering_leaves_code_and_comments_as_written(project_dir: Path) -> None:
    """The fixer reads the body as the rules do: an example shown as code is not a reference."""
    _break_numbering(project_dir)
    lesson = project_dir / LESSON
    shown = (
        "\n```markdown\nAs [Prop. 3](prop:3) says.\n```\n"
        "\nWrite ``[Prop. 3](prop:3)`` for a link. <!-- II.2 Prop. 3 is the old name -->\n"
    )
    lesson.write_text(lesson.read_text(encoding="utf-8") + shown, encoding="utf-8")
    _code, out = run("fix")
    assert "Fixed" in out, out
    after = lesson.read_text(encoding="utf-8")
    assert after.endswith(shown)
    assert "As [Prop. 2](prop:2) says, and II.2 Prop. 2 repeats" in after


def test_fix_judges_what_remains_through_the_cache_check_left(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture holds the cache of a check of this course: nothing is verified again,
    unless --no-cache asks for a run from scratch."""
    import coursekit.verify

    asked: list[int] = []
    real = coursekit.verify.verify_documents

    def counting(specs: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(len(specs))
        return real(specs, *args, **kwargs)

    monkeypatch.setattr(coursekit.verify, "verify_documents", counting)
    code, out = run("fix")
    assert (code, out, asked) == (0, "Nothing to fix.\n", [])
    code, out = run("fix", "--no-cache")
    assert (code, out) == (0, "Nothing to fix.\n")
    assert asked and asked[0] > 0
