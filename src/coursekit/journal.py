"""All-or-nothing writes of several files: stage them all, then commit; the next run finishes.

A command that writes several files (`new` writes a file and the manifest that lists it, `fix`
renumbers a chapter and its lessons) must not leave half of them written. `commit` does, under a
lock on the cache folder:

1. record the plan in `.coursekit_cache/journal.json` in state "staging": each target (relative
   to the project), the temporary file its new content is staged in (`.ck-<txn>-<n>.tmp` beside
   the target, a short name whatever the target's length), the sha256 of its old content (null:
   a new file) and of its new content, and the folders that have to be created;
2. create those folders and write every staged file, fsynced;
3. rewrite the journal in state "commit": the commit point;
4. rename each staged file over its target (new files first, then the manifests listing them);
5. remove the journal.

`recover` (run by every command before it reads the course) finishes an interrupted command: a
journal still "staging" is rolled back (staged files and created folders removed: the old tree);
one in "commit" is rolled forward (the remaining renames done: the new tree). Either way the
journal goes. A file edited by hand since the crash is never overwritten: that is an error
naming the file, and nothing is touched. `sweep` removes temporary files that older versions of
coursekit (or a killed single-file write) left in the course tree.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from coursekit.atomic import atomic_write_bytes, boundary, fsync_dir, mode_of, write_all
from coursekit.records import record

CACHE_DIR = ".coursekit_cache"  # the cache's folder (coursekit.cache.CACHE_DIR), not imported:
# every command imports this module, and the cache module is heavier than the warm path wants
JOURNAL = "journal.json"
LOCK = "journal.lock"
VERSION = 1
_STAGED = re.compile(r"\.ck-[0-9a-f]{8}-[0-9]+\.tmp")
# what `tempfile.mkstemp(prefix=".NAME.", suffix=".tmp")` makes: coursekit's writers before this one
_OLD_TEMP = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


class JournalError(Exception):
    """An interrupted command that cannot be finished safely; the message says what to do."""


@record(frozen=True)
class Entry:
    target: str  # POSIX path relative to the project root
    staged: str  # likewise, in the target's folder
    old: str | None  # sha256 of the content being replaced; None: a new file
    new: str  # sha256 of the content written


def journal_path(root: Path) -> Path:
    return root / CACHE_DIR / JOURNAL


def commit(root: Path, writes: Sequence[tuple[Path, bytes | None, bytes]]) -> list[Path]:
    """Write every `(path, old content or None, new content)` or none of them; the paths written.

    An exception before the commit point rolls back; one after it leaves the journal for the
    next run to complete (and says so).
    """
    with _locked(root, create=True):
        _recover_locked(root)
        txn = secrets.token_hex(4)
        ordered = sorted(writes, key=lambda w: (w[1] is not None, str(w[0])))
        entries = [
            Entry(
                target=_rel(root, path),
                staged=_rel(root, path.parent / f".ck-{txn}-{index}.tmp"),
                old=None if old is None else _sha256(old),
                new=_sha256(new),
            )
            for index, (path, old, new) in enumerate(ordered)
        ]
        created = _missing_folders(root, [path for path, _old, _new in ordered])
        _save(root, "staging", entries, created)
        try:
            for name in created:
                (root / name).mkdir()
            for entry, (path, _old, new) in zip(entries, ordered, strict=True):
                _stage(root / entry.staged, new, mode_of(path))
            for folder in sorted({path.parent for path, _old, _new in ordered}):
                fsync_dir(folder)
            _save(root, "commit", entries, created)
        except BaseException:
            _roll_back(root, entries, created)
            raise
        try:
            _roll_forward(root, entries)
        except OSError as exc:
            raise JournalError(
                f"interrupted while writing ({exc}); the next coursekit run completes it"
            ) from exc
        _finish(root)
    return [path for path, _old, _new in ordered]


def recover(root: Path) -> list[str]:
    """Finish a command that was interrupted: what was done, one line each (usually nothing)."""
    if not journal_path(root).is_file():
        return []
    with _locked(root, create=False):
        return _recover_locked(root)


def sweep(course_dir: Path) -> list[Path]:
    """Remove temporary files left in the course tree by an interrupted write; those removed."""
    removed: list[Path] = []
    for folder, _dirs, files in os.walk(course_dir):
        for name in files:
            if _STAGED.fullmatch(name) or _OLD_TEMP.fullmatch(name):
                path = Path(folder) / name
                with contextlib.suppress(OSError):
                    if path.is_file() and not path.is_symlink():
                        path.unlink()
                        removed.append(path)
    return removed


# The steps --------------------------------------------------------------------------------------


def _stage(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, mode)  # the umask narrowed what os.open was asked for
    boundary()


def _roll_forward(root: Path, entries: Sequence[Entry]) -> None:
    for entry in entries:
        staged = root / entry.staged
        if staged.exists():
            os.replace(staged, root / entry.target)
            boundary()
    for folder in sorted({(root / entry.target).parent for entry in entries}):
        fsync_dir(folder)


def _roll_back(root: Path, entries: Sequence[Entry], created: Sequence[str]) -> None:
    for entry in entries:
        with contextlib.suppress(FileNotFoundError):
            (root / entry.staged).unlink()
            boundary()
    for folder in reversed(created):  # deepest first; a folder someone filled meanwhile stays
        with contextlib.suppress(OSError):
            (root / folder).rmdir()
    _finish(root)


def _finish(root: Path) -> None:
    path = journal_path(root)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fsync_dir(path.parent)
    boundary()


def _recover_locked(root: Path) -> list[str]:
    for leftover in (root / CACHE_DIR).glob(".*.tmp"):  # a write there that was killed
        with contextlib.suppress(OSError):
            leftover.unlink()
    path = journal_path(root)
    if not path.is_file():
        return []
    state, entries, created = _load(root, path)
    names = ", ".join(entry.target for entry in entries)
    if state == "staging":
        _roll_back(root, entries, created)
        return [f"rolled back an interrupted write that had not committed ({names})"]
    _check_forward(root, entries)
    _roll_forward(root, entries)
    _finish(root)
    return [f"completed an interrupted write of {len(entries)} file(s) ({names})"]


def _check_forward(root: Path, entries: Sequence[Entry]) -> None:
    """Refuse to roll forward over a file that changed since the interrupted command read it."""
    for entry in entries:
        current = _hash_of(root / entry.target)
        staged = root / entry.staged
        if staged.exists():
            fine = _hash_of(staged) == entry.new and current in (entry.old, entry.new)
        else:
            fine = current == entry.new
        if not fine:
            raise JournalError(
                f"{entry.target} changed since an interrupted coursekit command staged its new "
                f"content, so it was not completed; check the files it names, then remove "
                f"{_rel(root, journal_path(root))} ({', '.join(e.target for e in entries)})"
            )


# The journal file -------------------------------------------------------------------------------


def _save(root: Path, state: str, entries: Sequence[Entry], created: Sequence[str]) -> None:
    document = {
        "version": VERSION,
        "state": state,
        "entries": [vars(entry) for entry in entries],
        "folders": list(created),
    }
    atomic_write_bytes(journal_path(root), json.dumps(document, indent=1).encode("ascii"))


def _load(root: Path, path: Path) -> tuple[str, list[Entry], list[str]]:
    """The journal, with every path checked to stay inside the project (it is input, too)."""
    try:
        document: Any = json.loads(path.read_bytes())
        if document["version"] != VERSION or document["state"] not in ("staging", "commit"):
            raise ValueError("unknown version or state")
        entries = [Entry(**row) for row in document["entries"]]
        created = [str(folder) for folder in document["folders"]]
        for entry in entries:
            staged, target = Path(entry.staged), Path(entry.target)
            if not _STAGED.fullmatch(staged.name) or staged.parent != target.parent:
                raise ValueError(f"staged file {entry.staged!r} is not beside {entry.target!r}")
        for name in [*created, *(e.target for e in entries)]:
            if not _inside(root, name):
                raise ValueError(f"{name!r} is outside the project")
    except (OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise JournalError(
            f"{_rel(root, path)}: cannot read the journal of an interrupted command ({exc}); "
            "check the course, then remove that file"
        ) from None
    return str(document["state"]), entries, created


# Helpers ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(root: Path, create: bool) -> Iterator[None]:
    folder = root / CACHE_DIR
    if folder.is_symlink():
        raise JournalError(
            f"{_rel(root, folder)} is a symbolic link; coursekit keeps its journal inside the "
            "project only (remove the link)"
        )
    if create:
        folder.mkdir(exist_ok=True)
        _tag(folder)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _tag(folder: Path) -> None:
    """Mark a cache folder this module made as coursekit's, so `coursekit clean` may remove it."""
    from coursekit.cache import CACHEDIR_TAG

    for name, text in (
        (".gitignore", "# Created by coursekit automatically.\n*\n"),
        ("CACHEDIR.TAG", CACHEDIR_TAG),
    ):
        if not (folder / name).exists():
            atomic_write_bytes(folder / name, text.encode("ascii"), durable=False)


def _missing_folders(root: Path, paths: Sequence[Path]) -> list[str]:
    """Folders to create for `paths`, outermost first."""
    missing: set[Path] = set()
    for path in paths:
        folder = path.parent
        while not folder.exists() and folder != root and root in folder.parents:
            missing.add(folder)
            folder = folder.parent
    return [_rel(root, f) for f in sorted(missing, key=lambda f: (len(f.parts), str(f)))]


def _rel(root: Path, path: Path) -> str:
    return path.absolute().relative_to(root.absolute()).as_posix()


def _inside(root: Path, name: str) -> bool:
    path = Path(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hash_of(path: Path) -> str | None:
    try:
        return _sha256(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable"
