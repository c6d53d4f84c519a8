"""A set of planned file changes: shown as a unified diff, or written all together or not at all."""

from __future__ import annotations

import difflib
from dataclasses import field
from pathlib import Path

from coursekit.journal import JournalError, commit
from coursekit.records import record


class ChangeError(Exception):
    """A planned change that can no longer be applied safely."""


@record
class Change:
    path: Path  # absolute
    old: str | None  # None: a new file
    new: str


@record
class Changeset:
    root: Path  # paths in diffs are shown relative to this
    changes: dict[Path, Change] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was done, or skipped, and why

    def create(self, path: Path, text: str) -> None:
        path = path.absolute()
        if path.exists() or path in self.changes:
            raise ChangeError(f"{self.rel(path)} already exists")
        self.changes[path] = Change(path, None, text)

    def update(self, path: Path, old: str, new: str) -> None:
        path = path.absolute()
        previous = self.changes.get(path)
        if previous is not None:
            previous.new = new
        elif new != old:
            self.changes[path] = Change(path, old, new)

    def current(self, path: Path) -> str | None:
        """The planned text of `path`, if this changeset already changes it."""
        change = self.changes.get(path.absolute())
        return None if change is None else change.new

    @property
    def effective(self) -> list[Change]:
        return [
            change
            for _path, change in sorted(self.changes.items())
            if change.old is None or change.old != change.new
        ]

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def diff(self) -> str:
        chunks: list[str] = []
        for change in self.effective:
            name = self.rel(change.path)
            old_lines = [] if change.old is None else change.old.splitlines(keepends=True)
            new_lines = change.new.splitlines(keepends=True)
            lines = list(
                difflib.unified_diff(
                    old_lines,
                    new_lines,
                    fromfile="/dev/null" if change.old is None else f"a/{name}",
                    tofile=f"b/{name}",
                )
            )
            chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
        return "".join(chunks)

    def apply(self) -> list[Path]:
        """Write every change or none (`coursekit.journal`): new files, then their manifests.

        A file changed on disk since it was read is not overwritten (`ChangeError`).
        """
        effective = self.effective
        for change in effective:
            on_disk = _read(change.path)
            if change.old is None and on_disk is not None:
                raise ChangeError(f"{self.rel(change.path)} appeared meanwhile; not overwritten")
            if change.old is not None and on_disk != change.old:
                raise ChangeError(f"{self.rel(change.path)} changed meanwhile; run again")
            if not change.path.is_relative_to(self.root):
                raise ChangeError(f"{change.path} is outside the project {self.root}; not written")
        writes = [
            (c.path, None if c.old is None else c.old.encode("utf-8"), c.new.encode("utf-8"))
            for c in effective
        ]
        try:
            return commit(self.root, writes)
        except JournalError as exc:
            raise ChangeError(str(exc)) from None


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "\x00unreadable"
