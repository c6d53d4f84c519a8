"""Round-trip edits: only the edited region changes, byte for byte, or the edit is refused."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from coursekit.authoring.yamledit import (
    EditError,
    Indent,
    YamlEditor,
    confined,
    detect_indent,
    render_scalar,
)
from coursekit.load.yamlparse import parse_yaml

from .conftest import REAL_COURSE, added_only, changed_lines

REAL_YAML = sorted(REAL_COURSE.rglob("*.yaml"))


def data(text: str) -> object:
    return parse_yaml(text, "<t>")[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a:\n  b: 1\nc:\n  - x\n", Indent(2, 4, 2)),
        ("a:\n    b: 1\nc:\n- x\n", Indent(4, 2, 0)),
        ("a:\n  b: 1\nc:\n- x\n", Indent(2, 2, 0)),
        ("c:\n  -   x\n", Indent(2, 6, 2)),
    ],
)
def test_detect_indent(text: str, expected: Indent) -> None:
    assert detect_indent(text) == expected


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "0",
        "II",
        "yes",
        "null",
        "a: b",
        "# no",
        "it's",
        '"q"',
        "-x",
        "[a]",
        "x, y",
        " pad",
        "Łukasz",
        "1e3",
        "2024-01-01",
    ],
)
@pytest.mark.parametrize("flow", [False, True])
def test_render_scalar_reads_back(value: str, flow: bool) -> None:
    rendered = render_scalar(value, flow=flow)
    text = f"k: [{rendered}]\n" if flow else f"k: {rendered}\n"
    expected = {"k": [value]} if flow else {"k": value}
    assert data(text) == expected


def test_append_to_block_list_goes_before_the_comment_that_follows_it() -> None:
    text = "items:\n  - lesson: a\n  - lesson: b   # keep me\n\n# about problems\nproblems: []\n"
    editor = YamlEditor(text)
    editor.append(("items",), {"lesson": "c"})
    assert added_only(text, editor.text) == ["  - lesson: c\n"]
    assert editor.text.index("lesson: c") < editor.text.index("# about problems")


def test_append_to_flow_lists_keeps_the_style_and_the_quotes() -> None:
    text = 'books: ["0", I, II]   # reading order\nproblems: []\n'
    editor = YamlEditor(text)
    editor.append(("books",), "III")
    editor.append(("problems",), "p-1")
    assert editor.text == 'books: ["0", I, II, III]   # reading order\nproblems: [p-1]\n'


def test_insert_keeps_blank_line_separation() -> None:
    text = "apparatus:\n  - id: a\n    title: A\n\n  - id: c\n    title: C\n"
    editor = YamlEditor(text)
    editor.insert(("apparatus",), 1, {"id": "b", "title": "B"})
    assert editor.text == (
        "apparatus:\n  - id: a\n    title: A\n\n  - id: b\n    title: B\n\n  - id: c\n    title: C\n"
    )


def test_set_scalar_keeps_quotes_and_trailing_comment() -> None:
    text = "id: 'II.3'   # wrong\nn: 3 # x\n"
    editor = YamlEditor(text)
    editor.set_scalar(("id",), "II.2")
    editor.set_scalar(("n",), 2)
    assert editor.text == "id: 'II.2'   # wrong\nn: 2 # x\n"


def test_replace_item_refuses_to_drop_a_comment() -> None:
    text = "items:\n  - planned: a   # why\n    strand: basics\n    title: A\n"
    with pytest.raises(EditError):
        YamlEditor(text).replace_item(("items",), 0, {"lesson": "a"})
    assert YamlEditor(text).text == text


def test_missing_top_level_list_is_created_at_the_end() -> None:
    text = "id: I\ntitle: One"
    editor = YamlEditor(text)
    editor.append(("chapters",), "I.1")
    assert editor.text == "id: I\ntitle: One\nchapters: [I.1]\n"


def test_broken_yaml_is_refused() -> None:
    with pytest.raises(EditError):
        YamlEditor("a: [1, 2\nb: 3\n")


def test_crlf_files_keep_their_line_endings() -> None:
    text = "items:\r\n  - a\r\n  - b\r\nnext: 1\r\n"
    editor = YamlEditor(text)
    editor.append(("items",), "c")
    assert editor.text == "items:\r\n  - a\r\n  - b\r\n  - c\r\nnext: 1\r\n"


def test_confined() -> None:
    assert confined("a\nb\nc\n", "a\nX\nY\nc\n", 1, 2)
    assert not confined("a\nb\nc\n", "a\nX\nc2\n", 1, 2)


def _lists(node: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found: list[tuple[str | int, ...]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _lists(value, (*path, key))
    elif isinstance(node, list):
        if all(not isinstance(x, list) for x in node):
            found.append(path)
        for index, value in enumerate(node):
            found += _lists(value, (*path, index))
    return found


@pytest.mark.parametrize("path", REAL_YAML, ids=lambda p: p.relative_to(REAL_COURSE).as_posix())
def test_every_list_of_every_real_file_takes_an_item_touching_nothing_else(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    original = data(text)  # parsed once: each case edits a deep copy of it
    for where in _lists(original):
        editor = YamlEditor(text, path.name)
        sample = original
        for part in where:
            sample = sample[part]  # type: ignore[index]
        assert isinstance(sample, list)
        value: object = (
            {"note": "added item"} if sample and isinstance(sample[0], dict) else "added-item"
        )
        editor.append(where, value)
        added = added_only(text, editor.text) if _block_or_empty(text, editor.text) else None
        if added is None:  # a flow list: exactly one line changed, the list's own
            assert len(changed_lines(text, editor.text)) == 1
        expected = copy.deepcopy(original)
        target = expected
        for part in where:
            target = target[part]  # type: ignore[index]
        target.append(value)  # type: ignore[attr-defined]
        assert data(editor.text) == expected


def _block_or_empty(old: str, new: str) -> bool:
    return len(new.splitlines()) != len(old.splitlines())


@pytest.mark.parametrize("path", REAL_YAML, ids=lambda p: p.relative_to(REAL_COURSE).as_posix())
def test_every_integer_of_every_real_file_can_be_set_on_its_own_line(path: Path) -> None:
    text = path.read_text(encoding="utf-8")

    def ints(node: object, at: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
        if isinstance(node, dict):
            return [p for k, v in node.items() for p in ints(v, (*at, k))]
        if isinstance(node, list):
            return [p for i, v in enumerate(node) for p in ints(v, (*at, i))]
        return [at] if isinstance(node, int) and not isinstance(node, bool) else []

    for where in ints(data(text)):
        editor = YamlEditor(text)
        editor.set_scalar(where, 987654)
        changes = changed_lines(text, editor.text)
        assert len(changes) == 1 and "987654" in changes[0][1]
