"""What the course folder holds: asked of the disk, or of the tree the run first saw.

A load given a `KnownTree` (a `check` with the cache: coursekit.cache_seen.SeenTree) asks it,
not the disk, which files and folders exist inside the course folder, and takes from it the
texts it keeps; what the load finds is then a function of that one look at the tree, however
the files change meanwhile. Without one (the language server, `fix`, `new`, `--no-cache`)
every question goes to the disk, as it always did. Either way the answers are the same for
the same tree: a tree that holds a link is never known (the digest refuses it), so a path
inside it names what it spells.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

MAX_ASSETS = 10_000  # files below one chapter folder that a load lists


class KnownTree(Protocol):
    """The course folder as this run first saw it: its files and folders, and the texts of
    those whose content an earlier run read.

    Paths are relative to the course folder. `text` gives a text only for content that read
    whole and valid before (every check of `read_text` but where the file lies, which the
    tree vouches for: it holds no link), so it stands for reading the file; `read` and
    `refused` are told of each file read (or that did not read) from the disk, so the tree
    can tell whether it still held then what it held at first."""

    def text(self, path: str) -> str | None: ...

    def read(self, path: str, text: str) -> bool:
        """Told of a text read from the disk; whether it is the content the tree took."""
        ...

    def digest(self, path: str) -> str | None:
        """The SHA-256 (hex) of the file's content as the tree took it (None: not by content)."""
        ...

    def refused(self, path: str) -> None: ...

    def is_file(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def names(self, folder: str) -> list[str]:
        """The names of the files and folders directly in `folder` ("": the course folder)."""
        ...

    def files_below(self, folder: str) -> list[str]:
        """The paths of every file below `folder` ("": the course folder), sorted."""
        ...


class Listing:
    """Which files and folders exist, for one load: from `tree` inside the course folder when
    given, from the disk otherwise."""

    def __init__(self, course_dir: Path, tree: KnownTree | None = None) -> None:
        self.tree = tree
        self._course = os.path.normpath(course_dir)
        self._below_course = self._course.rstrip("/") + "/"
        self._subfolders: dict[Path, list[str]] = {}

    def inside(self, path: Path) -> str | None:
        """The path relative to the course folder, when the tree answers for it."""
        if self.tree is None:
            return None
        text = os.fspath(path)
        # normpath (~2 µs, ~40,000 calls at 1,000 chapters) changes only a path like these
        if "/." in text or "//" in text or text[:1] != "/" or text.endswith("/"):
            text = os.path.normpath(text)
        if text == self._course:
            return ""
        if not text.startswith(self._below_course):
            return None
        return text[len(self._below_course) :]

    def known(self, path: Path) -> tuple[KnownTree, str] | None:
        """The tree and the path inside it, when the tree answers for `path`."""
        inside = self.inside(path)
        return None if inside is None or self.tree is None else (self.tree, inside)

    def is_file(self, path: Path) -> bool:
        known = self.known(path)
        return path.is_file() if known is None else known[0].is_file(known[1])

    def is_dir(self, path: Path) -> bool:
        known = self.known(path)
        return path.is_dir() if known is None else known[0].is_dir(known[1])

    def lexists(self, path: Path) -> bool:
        """Anything at all at the path: a file, a folder, a link, even a broken one."""
        known = self.known(path)
        if known is None:
            return os.path.lexists(path)
        tree, inside = known
        return tree.is_file(inside) or tree.is_dir(inside)

    def entry_names(self, folder: Path) -> list[str]:
        """The names of what `folder` holds, sorted ([] when it cannot be listed): no path is
        built for them (at 1,000 chapters ~6,000 of them, for a name looked at)."""
        known = self.known(folder)
        if known is not None:
            return sorted(known[0].names(known[1]))
        try:
            return sorted(os.listdir(folder))
        except OSError:
            return []

    def subfolders(self, folder: Path) -> list[str]:
        """The sorted names of the folders in `folder`, listed once per load (each chapter of
        a book looks for its own folder among them)."""
        names = self._subfolders.get(folder)
        if names is None:
            known = self.known(folder)
            if known is not None:
                tree, inside = known
                below = f"{inside}/" if inside else ""
                names = sorted(n for n in tree.names(inside) if tree.is_dir(below + n))
            else:
                try:
                    with os.scandir(folder) as entries:
                        names = sorted(entry.name for entry in entries if entry.is_dir())
                except OSError:
                    names = []
            self._subfolders[folder] = names
        return names

    def files_below(self, folder: Path, rel: str) -> list[str]:
        """Regular files below `folder` (no links, none through a linked folder), named below
        `rel` (the folder's project-relative path); at most `MAX_ASSETS`. On the disk the
        file type comes with the listing, so no file is stat-ed."""
        known = self.known(folder)
        if known is not None:
            return _known_files_below(*known, rel)
        found: list[str] = []
        stack = [(str(folder), rel)]
        while stack and len(found) < MAX_ASSETS:
            where, below = stack.pop()
            try:
                with os.scandir(where) as listing:
                    entries = list(listing)
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{below}/{entry.name}"))
                elif entry.is_file(follow_symlinks=False) and len(found) < MAX_ASSETS:
                    found.append(f"{below}/{entry.name}")
        return found


def _known_files_below(tree: KnownTree, inside: str, rel: str) -> list[str]:
    every = tree.files_below(inside)
    if len(every) < MAX_ASSETS:  # (a cut listing is the walk's first files: walked below)
        cut = len(inside) + 1 if inside else 0
        return [f"{rel}/{path[cut:]}" for path in every]
    found: list[str] = []
    stack = [(inside, rel)]
    while stack and len(found) < MAX_ASSETS:
        where, below = stack.pop()
        for name in tree.names(where):
            path = f"{where}/{name}" if where else name
            if tree.is_dir(path):
                stack.append((path, f"{below}/{name}"))
            elif len(found) < MAX_ASSETS:
                found.append(f"{below}/{name}")
    return found
