"""Where course text becomes a file name or a number, and how large a file coursekit reads.

Ids in the course (`books: [II]`, `lesson: masks`, `program: solution.py`) become path
segments. The file system refuses a segment over 255 bytes (`ENAMETOOLONG`) or a path over
4,096, and a NUL byte cannot be passed to it at all, so such a name is caught here, once, where
the path is formed, and reported by whoever formed it; no caller needs a try/except.

A reference's number (`fig:2`, `prop:II.2/1`, "Prop. 3") is read with `ref_number`: Python
refuses to convert more than 4,300 digits, and no course counts past a billion anyway.

Which of a sorted list of paths lie below a folder (`paths_below`), or directly in it
(`names_in`), is decided here too, for the known tree (`cache_seen.SeenTree`) and each
chapter's texts (`rules.facts`) alike.

Standard library only: the cache (on the warm path) uses `MAX_FILE_BYTES` too.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path

NAME_MAX = 255  # bytes in one path segment (ext4, xfs, btrfs, APFS)
PATH_MAX = 4096  # bytes in a whole path (Linux)
MAX_FILE_BYTES = 4 * 1024 * 1024  # a course file larger than this is refused, never read
MAX_REF_DIGITS = 9  # a figure, proposition or equation number: below a billion
SHOWN = 60  # characters of an offending value quoted in a message


class UnusableName(ValueError):
    """A name from the course that cannot be a path segment; `reason` says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"'{shorten(name)}' {reason}")
        self.name = name
        self.reason = reason


def name_problem(name: str) -> str | None:
    """Why `name` cannot be one segment of a path inside its folder, or None when it can."""
    if not name:
        return "is empty"
    if name in (".", ".."):
        return f"is '{name}', which names a folder, not an entry in it"
    if "/" in name or "\\" in name:
        return "holds a path separator"
    if "\x00" in name:
        return "holds a NUL byte"
    try:
        size = len(os.fsencode(name))
    except UnicodeError:
        return "holds characters that cannot be written in a file name"
    if size > NAME_MAX:
        return f"is {size:,} bytes long; a file name holds at most {NAME_MAX}"
    return None


def child(folder: Path, *names: str) -> Path:
    """`folder / name / ...`, or `UnusableName` for a segment (or a whole path) too long."""
    for name in names:
        reason = name_problem(name)
        if reason is not None:
            raise UnusableName(name, reason)
    path = folder.joinpath(*names)  # (one path built, not one per name)
    size = len(os.fsencode(str(path)))
    if size >= PATH_MAX:
        raise UnusableName(names[-1] if names else str(folder), f"makes a path of {size:,} bytes")
    return path


def paths_below(paths: list[str], folder: str) -> list[str]:
    """The paths of sorted `paths` below `folder` ("": all of them): the run that starts with
    the folder's path and "/", found by bisection, and ends before its path and "0" (the
    character after "/"), so a sibling named as the folder and more is not below it."""
    if not folder:
        return list(paths)
    start = bisect.bisect_left(paths, folder + "/")
    return paths[start : bisect.bisect_left(paths, folder + "0", start)]


def names_in(paths: list[str], folder: str) -> list[str]:
    """The names of the sorted `paths` directly in `folder` ("": the top), in order. The
    paths below each subfolder are stepped over by bisection, so a book's folder costs its
    dozen names, not its chapters' thousands of files."""
    prefix = folder + "/" if folder else ""
    at = bisect.bisect_left(paths, prefix)
    cut, end = len(prefix), len(paths)
    names: list[str] = []
    while at < end and paths[at].startswith(prefix):
        name, below, _ = paths[at][cut:].partition("/")
        if below:  # its run ends before its name and "0", the character after "/"
            at = bisect.bisect_left(paths, prefix + name + "0", at + 1)
        else:
            names.append(name)
            at += 1
    return names


def shorten(text: str, limit: int = SHOWN) -> str:
    """A value as quoted in a message: at most `limit` characters, an ellipsis for the rest."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ref_number(digits: str) -> int | None:
    """The number a reference names, or None when it is longer than any count in a course."""
    if len(digits.lstrip("0")) > MAX_REF_DIGITS:
        return None
    return int(digits)
