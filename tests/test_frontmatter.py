"""What `check` tells of an edit before it imports the engine (coursekit.frontmatter): whether
it brought a lesson claims or formulas no run has seen, so that the sympy server starts first
thing. A hint, never a verdict: the cases below are what decides a start."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coursekit import cache_tree
from coursekit.bounds import MAX_FILE_BYTES
from coursekit.cache_files import CACHE_DIR
from coursekit.commands import check as command
from coursekit.frontmatter import MAX_PROBED, brings_new_maths, front_matter
from coursekit.options import Options
from coursekit.project import find_project

BUNDLED = Path(__file__).resolve().parent.parent / "course"
WITH_CLAIMS = "---\ntitle: T\nclaims:\n  - id: c\n    value: 1\n---\nSome prose.\n"
PLAIN = "---\ntitle: T\n---\nSome prose.\n"


def _probe(tmp_path: Path, files: dict[str, str], kept: dict[str, str | None]) -> bool | None:
    """`brings_new_maths` over `files` (path -> text now), each kept before as `kept[path]`
    (None: a new file)."""
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    edited = {path: (f"old-{path}" if kept.get(path) is not None else None) for path in files}
    before = {f"old-{path}": text for path, text in kept.items() if text is not None}
    return brings_new_maths(tmp_path, edited, before.get)


CASES: dict[str, tuple[dict[str, str], dict[str, str | None], bool]] = {
    "a claim's value edited to another number": (
        {"l.md": WITH_CLAIMS.replace("value: 1", "value: '2.5'  # was 1")},
        {"l.md": WITH_CLAIMS},
        False,
    ),
    "a claim's value edited to a formula": (
        {"l.md": WITH_CLAIMS.replace("value: 1", "value: grid / 2")},
        {"l.md": WITH_CLAIMS},
        True,
    ),
    "a claim's digits given": (
        {"l.md": WITH_CLAIMS.replace("value: 1", "value: 1\n    digits: 2")},
        {"l.md": WITH_CLAIMS},
        True,  # a line more: read as new maths (a hint; the server starts for nothing)
    ),
    "a claim's id edited": (
        {"l.md": WITH_CLAIMS.replace("id: c", "id: d")},
        {"l.md": WITH_CLAIMS},
        True,
    ),
    "prose edited under claims": (
        {"l.md": WITH_CLAIMS + "More prose.\n"},
        {"l.md": WITH_CLAIMS},
        False,
    ),
    "a new lesson with formulas": (
        {"n.md": "---\ntitle: N\nformulas:\n  - id: f\n---\nx\n"},
        {"n.md": None},
        True,
    ),
    "front matter edited, no maths in it": (
        {"l.md": PLAIN.replace("title: T", "title: U")},
        {"l.md": PLAIN},
        False,
    ),
    "maths where the text before is no longer kept": (
        {"l.md": WITH_CLAIMS},
        {"l.md": None},
        True,
    ),
    "a manifest edited": ({"chapter.yaml": "claims:\n  - 1\n"}, {"chapter.yaml": "x: 1\n"}, False),
    "a lesson without front matter": ({"l.md": "claims:\n  - 1\n"}, {"l.md": "old\n"}, False),
    "a lesson that is not UTF-8": ({"l.md": "---\nclaims: []\n---\n\udcff"}, {}, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_what_starts_the_server_early(tmp_path: Path, case: str) -> None:
    files, kept, expected = CASES[case]
    if case == "a lesson that is not UTF-8":
        (tmp_path / "l.md").write_bytes(b"---\nclaims: []\n---\n\xff")
        assert brings_new_maths(tmp_path, {"l.md": None}, lambda digest: None) is expected
        return
    assert _probe(tmp_path, files, kept) is expected


def test_more_lessons_than_are_worth_reading_leave_it_to_the_load(tmp_path: Path) -> None:
    files = {f"l{i}.md": WITH_CLAIMS for i in range(MAX_PROBED + 1)}
    assert _probe(tmp_path, files, {}) is None


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_lesson_that_became_a_fifo_or_a_link_is_not_read(tmp_path: Path, kind: str) -> None:
    """Replaced since the lookup hashed it: neither waited on (a FIFO with no writer would
    block the run) nor followed."""
    (tmp_path / "target.md").write_text(WITH_CLAIMS, encoding="utf-8")
    if kind == "fifo":
        os.mkfifo(tmp_path / "l.md")
    else:
        (tmp_path / "l.md").symlink_to(tmp_path / "target.md")
    assert not brings_new_maths(tmp_path, {"l.md": None}, lambda digest: None)


def test_a_long_lesson_is_read_whole_up_to_the_loaders_cap(tmp_path: Path) -> None:
    """Read as the load reads it: whole, so no character is cut (as a first MiB would cut
    this one), and not at all past the course files' cap, which the load refuses."""
    mib = 1 << 20
    text = WITH_CLAIMS + ("" if len(WITH_CLAIMS) % 2 else "x") + "é" * mib
    with pytest.raises(UnicodeDecodeError):  # a first MiB ends inside an é
        text.encode("utf-8")[:mib].decode("utf-8")
    (tmp_path / "l.md").write_text(text, encoding="utf-8")
    assert brings_new_maths(tmp_path, {"l.md": None}, lambda digest: None)
    (tmp_path / "l.md").write_text(WITH_CLAIMS + "x" * MAX_FILE_BYTES, encoding="utf-8")
    assert not brings_new_maths(tmp_path, {"l.md": None}, lambda digest: None)


def test_front_matter_is_the_loaders() -> None:
    text = "---\na: 1\n...  \nbody\n"
    assert front_matter(text) == (text.index("..."), text.index("body"))
    assert front_matter("no front matter\n---\n") is None
    assert front_matter("---\nnever closed\n") is None


def test_the_tree_digest_names_what_it_found_edited(tmp_path: Path) -> None:
    course = tmp_path / "course"
    (course / "a").mkdir(parents=True)
    (course / "a/one.md").write_text("one\n")
    (course / "a/two.md").write_text("two\n")
    table = tmp_path / CACHE_DIR / "table"
    first = cache_tree.TreeDigest(course, table)
    assert first.compute() is not None
    assert first.edited == {"a/one.md": None, "a/two.md": None}  # no table: all new
    first.save()
    old = first.files["a/one.md"]
    (course / "a/one.md").write_text("one, edited\n")
    (course / "a/three.md").write_text("three\n")
    second = cache_tree.TreeDigest(course, table)
    assert second.compute() is not None
    assert second.edited == {"a/one.md": old, "a/three.md": None}


# Through `check`: the server starts before the engine is imported, or not at all -------------


class _Recorder:
    """A sympy server that records when it was started (and verifies nothing: the run then
    verifies in-process, as after a lost server)."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.failed = False
        self.settled = False

    def start(self) -> None:  # as the server: nothing once `ahead` settled it
        if not self.settled:
            self.events.append("start")

    def ahead(self, start: bool) -> None:
        self.settled = True
        self.events.append("start" if start else "not ahead")

    def verify(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append("closed")


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []

    def server(options: Options) -> Any:  # as `check`'s: the run's own, once it has one
        if options.sympy is not None:
            return contextlib.nullcontext(options.sympy)
        return _Recorder(seen)

    monkeypatch.setattr(command, "_sympy_server", server)
    real_known, real_run = command._known_format, command.run

    def known(name: str) -> None:
        seen.append("imports")  # the reporters' import: the models, pydantic
        real_known(name)

    def run(*args: Any, **kwargs: Any) -> int:
        seen.append("run")
        return real_run(*args, **kwargs)

    monkeypatch.setattr(command, "_known_format", known)
    monkeypatch.setattr(command, "run", run)
    return seen


LESSON = "II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"


def _claim_edit(text: str) -> str:
    head, marker, rest = text.partition("value: ")
    number, newline, tail = rest.partition("\n")
    return head + marker + str(int(number) + 1) + newline + tail


EDITS: dict[str, tuple[Callable[[str], str], bool]] = {
    # Judged against the number its expression came to before (coursekit.verify.parts).
    "a claim's value": (_claim_edit, False),
    "a claim's expression": (lambda text: text.replace("rhs: T/d\n", "rhs: d/T\n", 1), True),
    "the prose": (lambda text: text + "\nOne sentence more.\n", False),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_check_starts_the_server_first_for_new_maths_only(
    tmp_path: Path, events: list[str], edit: str
) -> None:
    course = tmp_path / "course"
    shutil.copytree(BUNDLED, course)
    project = find_project(course, course)
    options = Options(exec=False)

    def check() -> None:
        command.run_cached(project, [], "text", io.StringIO(), False, options)

    check()
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    assert "value: " in text.split("\n---\n", 1)[0]  # a lesson with claims in front matter
    change, new_maths = EDITS[edit]
    lesson.write_text(change(text), encoding="utf-8")
    events.clear()
    check()
    assert events[-1] == "closed" and "run" in events
    if new_maths:  # started before the heavy imports (the load asks again: a no-op)
        assert events[0] == "start" and events.index("start") < events.index("imports")
    else:  # nothing to verify: never started, neither here nor by the load
        assert "start" not in events
