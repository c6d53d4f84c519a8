"""`coursekit lsp` driven over stdio by pygls's client, on a copy of the bundled course.

One server for the module: each test edits buffers and puts them back as they were.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from coursekit.engine import check
from coursekit.project import find_project

from .driver import Driver, position

BUNDLED = Path(__file__).resolve().parents[2] / "course"
CHAPTER = "course/II/2-from-recurrence-to-attention"
LESSON = f"{CHAPTER}/lessons/counting-multiplications.md"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lsp")
    shutil.copytree(BUNDLED, root / "course")
    return root


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[Driver]:
    driver = Driver(root)
    yield driver
    driver.stop()


def _codes(found: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in found]


def _apply(text: str, edits: Sequence[types.TextEdit]) -> str:
    """Apply whole-range edits (the server sends one replacement per file)."""
    for edit in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        lines = text.split("\n")
        start = sum(len(x) + 1 for x in lines[: edit.range.start.line]) + edit.range.start.character
        end = sum(len(x) + 1 for x in lines[: edit.range.end.line]) + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


def test_a_broken_link_is_published_at_its_range_and_cleared_when_fixed(
    server: Driver, root: Path
) -> None:
    path = root / LESSON
    original = path.read_text(encoding="utf-8")
    uri = server.open(path)
    assert server.wait_for(uri, lambda found: True) == []
    broken = original.replace("(lesson:II.2/goodbye-to-recurrence)", "(apparatus:0.LA.30)")
    server.change(uri, broken)
    found = server.wait_for(uri, lambda found: "CK504" in _codes(found))
    (diagnostic,) = [d for d in found if d.code == "CK504"]
    line, column = position(broken, "apparatus:0.LA.30")
    assert diagnostic.range.start == types.Position(line, column)
    assert diagnostic.range.end == types.Position(line, column + len("apparatus:0.LA.30"))
    assert "0.LA.03" in diagnostic.message  # the same "did you mean" as check
    assert path.read_text(encoding="utf-8") == original, "the server never writes"
    server.change(uri, original)
    assert server.wait_for(uri, lambda found: "CK504" not in _codes(found)) == []
    server.close(uri)


def test_a_broken_apparatus_id_in_a_chapter_is_ck301_at_the_value(
    server: Driver, root: Path
) -> None:
    path = root / CHAPTER / "chapter.yaml"
    original = path.read_text(encoding="utf-8")
    uri = server.open(path)
    server.wait_for(uri, lambda found: True)
    broken = original.replace("- id: 0.LA.03", "- id: 0.LA.33", 1)
    server.change(uri, broken)
    found = server.wait_for(uri, lambda found: "CK301" in _codes(found))
    (diagnostic,) = [d for d in found if d.code == "CK301"]
    line, column = position(broken, "0.LA.33")
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (line, column)
    assert diagnostic.range.end.character == column + len("0.LA.33")
    server.change(uri, original)
    server.wait_for(uri, lambda found: "CK301" not in _codes(found))
    server.close(uri)


def test_buffer_diagnostics_are_the_ones_check_reports_for_the_same_text(
    server: Driver, root: Path, tmp_path: Path
) -> None:
    path = root / LESSON
    original = path.read_text(encoding="utf-8")
    broken = original.replace("$d_h^2 + d_h d_x$", "$d_h^2 + d_h d_z$").replace(
        "(lesson:II.2/goodbye-to-recurrence)", "(lesson:II.2/goodbye)"
    )
    uri = server.open(path)
    server.change(uri, broken)
    found = server.wait_for(uri, lambda found: "CK501" in _codes(found))
    # the same text on disk, checked by the command's engine
    copy = tmp_path / "copy"
    shutil.copytree(root / "course", copy / "course")
    (copy / LESSON).write_text(broken, encoding="utf-8")
    expected = [d for d in check(find_project(copy)).diagnostics if d.path == LESSON]
    published = sorted((d.range.start.line + 1, str(d.code), d.message) for d in found)
    assert published == sorted((d.line, d.code, d.message) for d in expected)
    assert {"CK204", "CK501"} <= {d.code for d in expected}
    server.change(uri, original)
    server.wait_for(uri, lambda found: found == [])
    server.close(uri)


def test_a_change_in_book0_republishes_the_chapters_that_depend_on_it(
    server: Driver, root: Path
) -> None:
    book = root / "course/0/book.yaml"
    original = book.read_text(encoding="utf-8")
    uri = server.open(book)
    server.wait_for(uri, lambda found: True)
    retitled = original.replace(
        "title: Inner products, norms and cosine similarity", "title: Dot products"
    )
    server.change(uri, retitled)
    chapter_uri = (root / CHAPTER / "chapter.yaml").as_uri()
    found = server.wait_for(chapter_uri, lambda found: "CK303" in _codes(found))
    assert any("Dot products" in d.message for d in found)
    server.change(uri, original)
    server.wait_for(chapter_uri, lambda found: "CK303" not in _codes(found))
    server.close(uri)


def test_hover_definition_and_completion(server: Driver, root: Path) -> None:
    path = root / LESSON
    original = path.read_text(encoding="utf-8")
    text = original.replace("(lesson:II.2/goodbye-to-recurrence)", "(apparatus:0.LA.03)")
    uri = server.open(path)
    server.change(uri, text)
    server.wait_for(uri, lambda found: found == [])

    hover = server.hover(uri, *position(text, "$T$", 1))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "sequence length" in hover.contents.value
    assert "chapter II.2" in hover.contents.value

    line, column = position(text, "apparatus:0.LA.03", 12)
    hover = server.hover(uri, line, column)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Inner products, norms and cosine similarity" in hover.contents.value
    target = server.definition(uri, line, column)
    assert target.uri == (root / "course/0/book.yaml").as_uri()
    book = (root / "course/0/book.yaml").read_text(encoding="utf-8")
    assert (target.range.start.line, target.range.start.character) == position(book, "0.LA.03")

    hover = server.hover(uri, *position(text, "[524,288]", 2))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "step-512" in hover.contents.value
    assert "verified by sympy" in hover.contents.value

    typed = text.replace("(apparatus:0.LA.03)", "(apparatus:)")
    server.change(uri, typed)
    line, column = position(typed, "(apparatus:)", len("(apparatus:"))
    items = server.completion(uri, line, column).items
    labels = {item.label for item in items}
    assert {"0.LA.03", "0.IT.01"} <= labels
    assert next(i for i in items if i.label == "0.LA.03").detail.startswith("Inner products")

    server.change(uri, original)
    server.wait_for(uri, lambda found: found == [])
    server.close(uri)


def test_a_code_action_applies_coursekit_fix(server: Driver, root: Path) -> None:
    path = root / CHAPTER / "chapter.yaml"
    original = path.read_text(encoding="utf-8")
    broken = original.replace("id: II.2\n", "id: II.7\n", 1)
    uri = server.open(path)
    server.change(uri, broken)
    found = server.wait_for(uri, lambda found: "CK108" in _codes(found))
    misplaced = [d for d in found if d.code == "CK108"]
    actions = server.code_actions(uri, misplaced, misplaced[0].range.start.line)
    (fix,) = [a for a in actions if a.title.startswith("coursekit fix")]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.edit is not None
    assert fix.edit.changes is not None and list(fix.edit.changes) == [uri]
    assert _apply(broken, fix.edit.changes[uri]) == original
    server.change(uri, original)
    server.wait_for(uri, lambda found: "CK108" not in _codes(found))
    server.close(uri)


def test_a_fix_that_would_be_ambiguous_says_why_it_is_not_offered(
    server: Driver, root: Path
) -> None:
    path = root / CHAPTER / "chapter.yaml"
    original = path.read_text(encoding="utf-8")
    broken = original.replace("  - number: 2\n    title: Four", "  - number: 4\n    title: Four")
    assert broken != original
    uri = server.open(path)
    server.change(uri, broken)
    found = server.wait_for(uri, lambda found: "CK506" in _codes(found))
    fixable = [d for d in found if d.code == "CK506"]
    assert all(isinstance(d.data, dict) and d.data["fixable"] for d in fixable)
    actions = server.code_actions(uri, fixable, fixable[0].range.start.line)
    (note,) = [a for a in actions if a.title.startswith("coursekit fix")]
    assert note.edit is None and note.disabled is not None
    assert "ambiguous" in note.disabled.reason
    server.change(uri, original)
    server.wait_for(uri, lambda found: "CK506" not in _codes(found))
    server.close(uri)


def test_a_code_action_adds_an_undeclared_symbol_to_the_notation(
    server: Driver, root: Path
) -> None:
    path = root / LESSON
    original = path.read_text(encoding="utf-8")
    text = original.replace("Two warnings.", "Two warnings about $\\beta$.")
    uri = server.open(path)
    server.change(uri, text)
    found = server.wait_for(uri, lambda found: "CK204" in _codes(found))
    undeclared = [d for d in found if d.code == "CK204"]
    actions = server.code_actions(uri, undeclared, undeclared[0].range.start.line)
    (add,) = [a for a in actions if a.title.startswith("Add '\\beta'")]
    chapter = root / CHAPTER / "chapter.yaml"
    assert add.edit is not None and add.edit.changes is not None
    new = _apply(chapter.read_text(encoding="utf-8"), add.edit.changes[chapter.as_uri()])
    assert "- symbol: \\beta" in new or "symbol: '\\beta'" in new
    server.change(uri, original)
    server.wait_for(uri, lambda found: found == [])
    server.close(uri)


@pytest.mark.parametrize(
    "garbage",
    [
        "---\ntitle: [unclosed\nstrand: basics\n",  # half-typed front matter
        "---\ntitle: x\n---\nbody \x00\x01\x02 binary paste \ufffd\ufffd",
        "",
        "---\n" + "[" * 500 + "\n---\n",
        "---\ntitle: \ud800 a lone surrogate\n---\n",
    ],
    ids=["half-typed", "binary", "empty", "deep", "surrogate"],
)
def test_garbage_never_kills_the_server(server: Driver, root: Path, garbage: str) -> None:
    path = root / LESSON
    original = path.read_text(encoding="utf-8")
    uri = server.open(path)
    server.change(uri, garbage)
    found = server.wait_for(uri, lambda found: bool(found))
    assert all(str(d.code).startswith("CK1") for d in found), found
    assert isinstance(server.hover(uri, 0, 3), types.Hover | None)  # an answer, not an error
    server.completion(uri, 0, 0)
    server.code_actions(uri, found)
    assert server.alive()
    server.change(uri, original)
    server.wait_for(uri, lambda found: found == [])
    server.close(uri)


def test_a_malformed_request_is_answered_with_an_error_and_logged(
    server: Driver, root: Path
) -> None:
    """JSON-RPC: a request whose params are not of its method's shape gets an error response
    with its id (-32602, invalid params), so the client waiting on that id is not left
    waiting; the server logs it and goes on serving."""
    uri = (root / LESSON).as_uri()
    before = len(server.logs)
    # Written as it is, not through the client's typed API (which cannot even encode a
    # position that is not one, and would fail here, before anything reaches the server).
    request = {
        "jsonrpc": "2.0",
        "id": 999,
        "method": types.TEXT_DOCUMENT_HOVER,
        "params": {"textDocument": {"uri": uri}, "position": "nonsense"},
    }
    answered: Future[Any] = Future()
    server.client.protocol._request_futures[999] = answered  # what a client waiting on it holds
    server.call(lambda: server.client.protocol._send_data(request))
    error = answered.exception(timeout=30)
    assert isinstance(error, JsonRpcException), error
    assert error.code == -32602, error
    deadline = time.monotonic() + 30
    while not any("Invalid" in line for line in server.logs[before:]):
        assert time.monotonic() < deadline, f"no log message; logged: {server.logs[before:]}"
        time.sleep(0.02)
    assert isinstance(server.hover(uri, 0, 3), types.Hover | None)  # and it goes on answering
    assert server.alive()
