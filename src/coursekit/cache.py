"""The cache beside the project: `.coursekit_cache/`, keyed on content and settings (like ruff's).

Three layers, each keyed by everything its value depends on:

* **results** (`DiskStore`): the `ResultStore` the expensive rule families use (sympy verdicts,
  program outcomes). The rule family builds a key from its inputs' content; the store salts it
  with coursekit's version and source fingerprint, Python's version and the versions of the
  libraries results depend on (sympy, numpy, pydantic, ruamel.yaml, pylatexenc), all found
  without importing them.
* **documents** (`DiskStore` namespace `yaml`, used by the loader): a parsed YAML document
  (plain data plus its position tables) keyed by the SHA-256 of its text and its line offset,
  so an unchanged file is never parsed again (the memo itself is `load/parsecache.py`).
* **runs** (`RunCache`): the whole output of `coursekit check`, keyed by a digest of the course
  tree (every file's path and content hash and every folder's path, so also which exist), the
  configuration, the options, the output format, the reported paths and the environment above.
  When nothing changed, `check` replays the stored output without importing pydantic, the
  rules, sympy or numpy. A run in which a rule family *declined* a result (`decline`: a
  timeout, a killed worker, a crash; a verdict that depended on the clock) is never recorded,
  so the next run checks again instead of replaying a slow moment.

A file larger than the loader ever reads (`bounds.MAX_FILE_BYTES`, 4 MiB: a big figure, say) is
keyed by its stat tuple alone: its content cannot change any result, since coursekit reports
only its size. Smaller files are hashed in bounded chunks, so a run's memory does not grow with
the size of a file in the tree.

The cache folder is used only when it is reached without a symbolic link (the folder itself or
one planted inside it): a link would lead reads, writes and pruning outside the project.

Content hashes are memoised in a stat table (path -> mtime_ns, ctime_ns, size, inode, sha256),
the strategy git uses for its index: a file whose stat tuple is unchanged keeps its hash,
unless it is *racily clean* (modified within `RACY_NS` of when the table was written, when a
same-tick edit could leave the tuple unchanged); those are hashed again. ctime cannot be set
from user space, so restoring an mtime after an edit does not fool it.

Split by idea: `cache_files` (the folder, entries on disk), `cache_tree` (the tree digest and its
stat table), `cache_env` (what every key includes), `cache_store` (the result store, in a
folder per environment: `cache_sweep`), `cache_pack` (one run's entries in one file), and here
whole-run replay; the old names stay importable.

This module imports only the standard library at module level: it runs on the warm path.
Every write is atomic (temporary file, then `os.replace`); an unreadable or corrupted entry is
a miss, and a cache that cannot be written is silently skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from coursekit.cache_env import (
    LIBRARIES,
    environment,
    library_version,
    source_fingerprint,
)
from coursekit.cache_files import (
    CACHE_DIR,
    CACHEDIR_TAG,
    FORMAT,
    MAX_ENTRY_BYTES,
    _prepare,
    _read_json,
    _write_json,
    atomic_write,
    cache_root,
    clean,
    file_digest,
    inside_cache,
    sha256,
)
from coursekit.cache_stats import RACY_NS
from coursekit.cache_store import STORE, DiskStore, Layered
from coursekit.cache_tree import STAT_TABLE, TreeDigest
from coursekit.options import Options, not_in_key
from coursekit.project import relative_paths

MAX_RUNS = 64  # run entries kept; the oldest are pruned
NOT_IN_KEY = not_in_key()  # options that change how fast, not what (see coursekit.options)
# Names that moved to cache_files / cache_tree / cache_store, still importable from here.
__all__ = [
    "CACHEDIR_TAG",
    "CACHE_DIR",
    "FORMAT",
    "LIBRARIES",
    "MAX_ENTRY_BYTES",
    "MAX_RUNS",
    "NOT_IN_KEY",
    "RACY_NS",
    "STORE",
    "DiskStore",
    "Layered",
    "RunCache",
    "TreeDigest",
    "atomic_write",
    "cache_root",
    "clean",
    "environment",
    "file_digest",
    "inside_cache",
    "library_version",
    "run_settings",
    "sha256",
    "source_fingerprint",
]


# Whole runs -------------------------------------------------------------------------------------


class RunCache:
    """The output of a whole `check` run, replayed when nothing it depends on changed.

    Usage: `lookup()` before the run (the stored output and exit code, or None), then after a
    cold run `record(output, code)`, which stores only if the tree's digest is the same as
    before the run (an edit during the run must not be stored under the old content's key).
    """

    def __init__(
        self,
        project_root: Path,
        course_dir: Path,
        settings: Mapping[str, Any],
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = cache_root(project_root)
        self.project_root = project_root
        self.course_dir = course_dir
        self.settings = dict(settings)
        self._env = env
        self.key: str | None = None
        self.tree: TreeDigest | None = None

    @classmethod
    def for_check(
        cls,
        project: Any,
        paths: Sequence[Path],
        output_format: str,
        color: bool,
        options: Options,
    ) -> RunCache:
        """The run cache of `coursekit check` for a `Project` and the command line's settings."""
        settings = run_settings(
            output_format,
            color,
            relative_paths(project.root, paths),
            options,
            project.config.fingerprint,
        )
        return cls(project.root, project.course_dir, settings)

    def _digest(
        self, meanwhile: Callable[[], object] | None = None, changed_ns: int | None = None
    ) -> tuple[str | None, TreeDigest]:
        tree = TreeDigest(self.course_dir, self.root / FORMAT / STAT_TABLE)
        content = tree.compute(meanwhile=meanwhile, changed_ns=changed_ns)
        if content is None:
            return None, tree
        return self._key(content, len(tree.files)), tree

    def _key(self, content: str, files: int) -> str:
        """The run's key: the tree's digest and everything else its output depends on."""
        config_bytes = b""
        with contextlib.suppress(OSError):
            config_bytes = (self.project_root / "pyproject.toml").read_bytes()
        parts = {
            "tree": content,
            "files": files,
            "pyproject": sha256(config_bytes),
            "settings": self.settings,
            "root": str(self.project_root),
            "course": str(self.course_dir),
            "env": dict(self._env) if self._env is not None else environment(),
        }
        return sha256(json.dumps(parts, sort_keys=True, default=repr))

    def _entry_path(self, key: str) -> Path:
        return self.root / FORMAT / "runs" / f"{key}.json"

    def lookup(
        self, meanwhile: Callable[[], object] | None = None, changed_ns: int | None = None
    ) -> tuple[str, int] | None:
        """The stored output and exit code of this run, if nothing it depends on changed.

        `meanwhile`: work the caller would do after a miss, done while a forked child takes
        the digest of a large tree, if one does (`TreeDigest.compute`, with `changed_ns`)."""
        self.key, self.tree = self._digest(meanwhile, changed_ns)
        if self.key is None:
            return None
        entry = _read_json(self._entry_path(self.key))
        if (
            isinstance(entry, dict)
            and entry.get("key") == self.key
            and isinstance(entry.get("output"), str)
            and isinstance(entry.get("exit"), int)
        ):
            self.tree.save()
            return entry["output"], entry["exit"]
        return None

    def keep_table(self) -> None:
        """After a miss, before the run: write the stat table the lookup brought up to date
        and let go of its rows (what `digested`, `edited` and `just_edited` answer stays).
        The table only pairs stamps with content hashes, true whatever the run finds."""
        if self.tree is None:
            return
        with contextlib.suppress(OSError):
            _prepare(self.root)
            self.tree.save(release=True)

    def course_entries(self) -> list[str]:
        """Every file and folder the last lookup digested, relative to the course folder (none
        of them a link or a special file: such a tree is never looked up)."""
        if self.tree is None:
            return []
        return [*self.tree.folders, *self.tree.files]

    def digested(self) -> tuple[dict[str, str], set[str], list[str] | None] | None:
        """What the last lookup digested, relative to the course folder: each file -> the
        SHA-256 of its bytes (its stat, over the loader's cap), every folder, and the folders
        sorted when it has them so; None when the tree was not digested whole (a link or a
        special file in it)."""
        if self.tree is None or self.key is None:
            return None
        return self.tree.files, self.tree.folders, self.tree.folders_in_order

    def edited(self) -> dict[str, str | None]:
        """The files whose content the last lookup found changed since the stat table was
        written, relative to the course folder -> the digest the table held (None: new)."""
        return {} if self.tree is None else self.tree.edited

    def just_edited(self) -> bool:
        """Whether a course file changed within git's racy window of now (`RACY_NS`): what
        depends on the tree's stamps staying put (the warm path's record) must wait."""
        return self.tree is None or self.key is None or self.tree.recent(time.time_ns())

    def record(self, output: str, code: int) -> bool:
        """Store the run's output under the lookup's key. Only for a run whose load read the
        tree this lookup digested (`digested()`: coursekit.cache_seen.SeenTree) and did not
        diverge from it: its output is that tree's, whatever changed since, so the tree need
        not be stat-ed again (a run that read the disk as it then was would have to be)."""
        if self.key is None or self.tree is None:
            return False
        tree = self.tree
        try:
            _prepare(self.root)
        except OSError:
            return False
        tree.save()
        stored = _write_json(
            self._entry_path(self.key), {"key": self.key, "output": output, "exit": code}
        )
        if stored:
            _prune(self._entry_path(self.key).parent, MAX_RUNS)
        return stored


def _prune(folder: Path, keep: int) -> None:
    if not inside_cache(folder / "entry"):
        return
    try:
        entries = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder)]
    except OSError:
        return
    if len(entries) <= keep:
        return
    for _, path in sorted(entries)[: len(entries) - keep]:
        with contextlib.suppress(OSError):
            os.unlink(path)


def run_settings(
    output_format: str,
    color: bool,
    paths: Sequence[str],
    options: Options,
    config_fingerprint: str,
) -> dict[str, Any]:
    """The run's settings that shape its output (callables such as `progress` are left out)."""
    return {
        "format": output_format,
        "color": color,
        "paths": list(paths),
        "options": {
            k: v
            for k, v in sorted(options.key().items())
            if isinstance(v, str | int | float | bool) or v is None
        },
        "config": config_fingerprint,
    }
