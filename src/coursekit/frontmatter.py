"""A lesson's front matter found without the Markdown parser, and what a run can tell from it
before it imports anything heavy: whether an edit brought maths no run has verified.

Standard library only: `check` asks `brings_new_maths` between the whole-run cache's miss and
the import of the engine, so that the sympy server's interpreter imports sympy on the other
core while this one imports the rules and loads the course.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from coursekit.bounds import MAX_FILE_BYTES

# Past this many edited lessons the hint is not worth reading them for (a first run, a
# checkout): the load starts the server itself at the first lesson with maths no run has seen.
MAX_PROBED = 16
_MATHS = re.compile(r"^(?:claims|formulas)\s*:", re.M)


def front_matter(text: str) -> tuple[int, int] | None:
    """(start of the closing line, start of the body) of YAML front matter, or None.

    Front matter opens with a first line `---` and closes at the next line `---` or `...`
    (trailing spaces allowed). The loader splits lessons with this, so it and every rule agree.
    """
    first = text.find("\n")
    if first < 0 or text[:first].rstrip() != "---":
        return None
    offset = first + 1
    while True:
        newline = text.find("\n", offset)
        end = len(text) if newline < 0 else newline
        if text[offset:end].rstrip() in ("---", "..."):
            return offset, end if newline < 0 else newline + 1
        if newline < 0:
            return None
        offset = newline + 1


def _text(path: Path) -> str | None:
    """A lesson's text, or None for what the load refuses (and so verifies nothing in): over
    the course files' cap, not UTF-8. It may have become a link or a FIFO since the lookup
    hashed it: neither followed nor waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _front(text: str) -> str | None:
    found = front_matter(text)
    return None if found is None else text[: found[0]]


def brings_new_maths(
    course_dir: Path,
    edited: Mapping[str, str | None],
    before: Callable[[str], str | None],
) -> bool | None:
    """Whether a lesson among `edited` (course-relative path -> the digest of its content
    before the edit, None for a new file) now declares claims or formulas in front matter
    that differs from its content before (`before(digest)`: that text, when still kept), in
    more than the numbers its claims state; None when there are too many to read.

    A hint, never a verdict: a wrong answer starts the server for nothing, or as late as its
    first request; a prose edit, whose front matter is unchanged, starts nothing, and neither
    does a corrected value, which is judged against the number its expression came to before
    (coursekit.verify.parts)."""
    lessons = [(path, old) for path, old in edited.items() if path.endswith(".md")]
    if len(lessons) > MAX_PROBED:
        return None
    for path, old in lessons:
        text = _text(course_dir / path)
        if text is None:
            continue
        front = _front(text)
        if front is None or not _MATHS.search(front):
            continue
        previous = before(old) if old is not None else None
        earlier = None if previous is None else _front(previous)
        if earlier is None or not (earlier == front or _stated_only(earlier, front)):
            return True
    return False


# A line stating a claim's number, and a plain number (what is judged without sympy).
_STATED = re.compile(r"(?P<lead>\s*(?:-\s+)?)(?P<key>value|tolerance|digits)\s*:\s*(?P<text>.*)")
_PLAIN_NUMBER = re.compile(r"""(["']?)[-+]?[0-9][0-9_.,/eE+-]*\1\s*(?:#.*)?""")


def _stated_only(before: str, after: str) -> bool:
    """Whether two front matters differ only in the plain numbers of `value`, `tolerance` or
    `digits` lines, line for line."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) != len(new):
        return False
    for was, now in zip(old, new, strict=True):
        if was == now:
            continue
        a, b = _STATED.fullmatch(was), _STATED.fullmatch(now)
        if a is None or b is None or (a["lead"], a["key"]) != (b["lead"], b["key"]):
            return False
        if _PLAIN_NUMBER.fullmatch(b["text"]) is None:
            return False
    return True
