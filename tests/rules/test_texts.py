"""A YAML text's locator: each offset of the parsed string lands on that character in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CHAPTER, make_course
from coursekit.load.loader import load_course
from coursekit.rules._texts import chapter_texts, yaml_locator

VALUE = "The grid costs T/d times the recurrence, at every width d."

# The same value in each scalar style an author writes (folding joins the lines with spaces).
STYLES = {
    "plain": f"problem: {VALUE}\n",
    "folded": "problem: >-\n  The grid costs T/d times\n  the recurrence, at every width d.\n",
    "literal-one-line": f"problem: |-\n  {VALUE}\n",
    "double-quoted": f'problem: "{VALUE}"\n',
    "single-quoted": f"problem: '{VALUE}'\n",
    "plain over lines": "problem: The grid costs T/d times\n  the recurrence, at every width d.\n",
}


@pytest.mark.parametrize("style", list(STYLES))
def test_every_character_is_located_where_the_file_holds_it(tmp_path: Path, style: str) -> None:
    course_dir = make_course(tmp_path)
    manifest = course_dir / "I/1-first/chapter.yaml"
    text = CHAPTER.replace("problem: A problem.\n", STYLES[style])
    manifest.write_text(text, encoding="utf-8")
    course = load_course(course_dir, tmp_path).course
    chapter = course.chapters["I.1"]
    assert chapter.manifest.problem == VALUE
    locate = yaml_locator(course, chapter.manifest, "problem")
    lines = text.split("\n")
    for offset, char in enumerate(VALUE):
        if char.isspace():
            continue
        at = locate(offset)
        assert at.path == "course/I/1-first/chapter.yaml"
        assert lines[at.line - 1][at.column - 1] == char, (style, offset, at)
    # the chapter's texts locate through the same locator: the problem comes first
    first = chapter_texts(course, chapter)[0]
    assert (first.kind, first.value) == ("problem", VALUE)
    assert first.locate(VALUE.index("T/d")) == locate(VALUE.index("T/d"))


def test_a_value_that_is_gone_is_located_at_its_key(tmp_path: Path) -> None:
    course_dir = make_course(tmp_path)
    course = load_course(course_dir, tmp_path).course
    manifest = course.chapters["I.1"].manifest
    locate = yaml_locator(course, manifest, "no-such-key")
    assert locate(3) == manifest.loc("no-such-key")
