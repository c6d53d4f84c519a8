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

This module imports only the standard library at module level: it runs on the warm path.
Every write is atomic (temporary file, then `os.replace`); an unreadable or corrupted entry is
a miss, and a cache that cannot be written is silently skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import coursekit
from coursekit.bounds import MAX_FILE_BYTES
from coursekit.project import relative_paths

CACHE_DIR = ".coursekit_cache"
FORMAT = "v1"  # bump when the layout or any entry's shape changes
RACY_NS = 2_000_000_000  # two seconds: coarser than any filesystem's timestamp granularity
MAX_RUNS = 64  # run entries kept; the oldest are pruned
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # a cache entry larger than this is not ours: a miss
CHUNK = 1024 * 1024  # bytes hashed at a time
NOT_IN_KEY = frozenset({"jobs", "progress"})  # options that change how fast, not what
LIBRARIES = ("sympy", "numpy", "pydantic", "pydantic_core", "ruamel.yaml", "pylatexenc")

CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by coursekit.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


# The cache folder -------------------------------------------------------------------------------


def cache_root(project_root: Path) -> Path:
    return project_root / CACHE_DIR


def _prepare(root: Path) -> Path:
    """Create the cache folder with its .gitignore and CACHEDIR.TAG; the versioned subfolder."""
    base = root / FORMAT
    if not inside_cache(base / "entry"):
        raise OSError(f"{root} is (or holds) a symbolic link; the cache is not used")
    if not base.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        _write_if_missing(root / ".gitignore", "# Created by coursekit automatically.\n*\n")
        _write_if_missing(root / "CACHEDIR.TAG", CACHEDIR_TAG)
    return base


def _write_if_missing(path: Path, text: str) -> None:
    if not path.exists():
        atomic_write(path, text.encode("utf-8"))


def clean(project_root: Path) -> bool:
    """Remove the cache folder; False when there was none. Refuses a folder that is not ours."""
    root = cache_root(project_root)
    if not root.exists():
        return False
    if root.is_symlink() or not (root / "CACHEDIR.TAG").is_file():
        raise OSError(f"{root} has no CACHEDIR.TAG; not removing a folder coursekit did not make")
    import shutil

    shutil.rmtree(root)
    return True


def inside_cache(path: Path) -> bool:
    """Whether `path` lies in a cache folder reached without a symbolic link on the way.

    The folder is the nearest ancestor named `.coursekit_cache`; it, every folder below it down
    to `path`, and `path` itself must be what they seem (a link there could point anywhere).
    """
    folder = next((p for p in path.parents if p.name == CACHE_DIR), None)
    if folder is None or os.path.islink(path):
        return False
    expected = os.path.join(
        os.path.realpath(folder.parent), os.path.relpath(path.parent, folder.parent)
    )
    return os.path.realpath(path.parent) == os.path.normpath(expected)


def atomic_write(path: Path, data: bytes) -> None:
    """A cache entry, written whole or not at all (not fsynced: a lost entry is a miss)."""
    from coursekit.atomic import atomic_write_bytes  # only writers pay for tempfile

    if not inside_cache(path):
        raise OSError(f"{path}: the cache folder is reached through a symbolic link; not written")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data, durable=False)


def _read_json(path: Path) -> Any | None:
    try:
        if not inside_cache(path) or path.stat().st_size > MAX_ENTRY_BYTES:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def file_digest(path: Path, st: os.stat_result) -> str:
    """A file's key in the tree digest: its SHA-256 read in chunks, or, for a file larger than
    the loader reads, its stat tuple (what coursekit reports of it, its size, is in there)."""
    if st.st_size > MAX_FILE_BYTES:
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev)
        return "stat:" + ":".join(map(str, stamp))
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_json(path: Path, value: Any) -> bool:
    try:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        atomic_write(path, data.encode("utf-8"))
    except (OSError, TypeError, ValueError, RecursionError):
        return False
    return True


def sha256(data: bytes | str) -> str:
    if isinstance(data, str):  # a file name that is not UTF-8 holds lone surrogates
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


# What every key includes ------------------------------------------------------------------------

_versions_memo: dict[str, str] = {}


def library_version(name: str) -> str:
    """A distribution's version without importing it ("absent" when not installed).

    Read from the `<name>-<version>.dist-info` folder name (PEP 427) on `sys.path`, first match
    wins as for imports; `importlib.metadata.version` (which costs ~25 ms to import) only when no
    such folder is found.
    """
    if not _versions_memo:
        _scan_dist_info()
    key = _normalise(name)
    if key not in _versions_memo:
        try:
            from importlib.metadata import PackageNotFoundError, version

            _versions_memo[key] = version(name)
        except (PackageNotFoundError, ValueError, OSError):
            _versions_memo[key] = "absent"
    return _versions_memo[key]


def _normalise(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _scan_dist_info() -> None:
    wanted = {_normalise(name) for name in LIBRARIES}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if not folder.endswith(".dist-info"):
                continue
            dist, _, version = folder[: -len(".dist-info")].partition("-")
            key = _normalise(dist)
            if key in wanted and version and key not in _versions_memo:
                _versions_memo[key] = version
    _versions_memo.setdefault("", "")  # scanned


def source_fingerprint() -> str:
    """coursekit's own code: its version and every module's (path, mtime, size).

    The version alone would serve stale results from an editable install whose code changed.
    """
    package = Path(coursekit.__file__).parent
    entries: list[str] = [f"coursekit {coursekit.__version__}"]
    stack = [str(package)]
    while stack:
        folder = stack.pop()
        try:
            scan = list(os.scandir(folder))
        except OSError:
            continue
        for item in sorted(scan, key=lambda e: e.name):
            if item.name == "__pycache__":
                continue
            if item.is_dir(follow_symlinks=False):
                stack.append(item.path)
            elif item.name.endswith(".py"):
                st = item.stat()
                entries.append(f"{item.path}\0{st.st_mtime_ns}\0{st.st_size}")
    return sha256("\n".join(entries))


def environment() -> dict[str, str]:
    """Everything outside the course that a result depends on."""
    env = {
        "coursekit": coursekit.__version__,
        "coursekit_source": source_fingerprint(),
        "python": sys.version,
        "executable": sys.executable,
    }
    for name in LIBRARIES:
        env[name] = library_version(name)
    return env


def _salt(env: Mapping[str, str]) -> str:
    return sha256(json.dumps(dict(env), sort_keys=True))


# The result store ------------------------------------------------------------------------------


class DiskStore:
    """A `ResultStore` on disk: namespace/key -> JSON value, one file per entry.

    The file name is a hash of (environment salt, namespace, key); the entry repeats the key and
    salt, and a mismatch (a collision, a corrupted or truncated file) reads as a miss.
    """

    def __init__(self, project_root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = cache_root(project_root)
        self._env = dict(env) if env is not None else None
        self._salt: str | None = None
        self._base: Path | None = None
        self.writable = True
        self.declined: list[str] = []  # results not kept (clock-dependent): see RunCache

    @property
    def salt(self) -> str:
        if self._salt is None:
            self._salt = _salt(self._env if self._env is not None else environment())
        return self._salt

    def _path(self, namespace: str, key: str) -> Path:
        if self._base is None:
            self._base = self.root / FORMAT / "store"
        digest = sha256(f"{self.salt}\0{namespace}\0{key}")
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in namespace)[:40]
        return self._base / safe / digest[:2] / f"{digest[2:]}.json"

    def get(self, namespace: str, key: str) -> Any | None:
        entry = _read_json(self._path(namespace, key))
        if (
            not isinstance(entry, dict)
            or entry.get("salt") != self.salt
            or entry.get("namespace") != namespace
            or entry.get("key") != key
        ):
            return None
        return entry.get("value")

    def put(self, namespace: str, key: str, value: Any) -> None:
        if not self.writable:
            return
        try:
            _prepare(self.root)
        except OSError:
            self.writable = False
            return
        entry = {"salt": self.salt, "namespace": namespace, "key": key, "value": value}
        if not _write_json(self._path(namespace, key), entry):
            # unwritable folder or a value JSON cannot hold: the result is simply not kept
            return

    def decline(self, namespace: str, key: str, why: str) -> None:
        """Not kept, and an entry an earlier run left under the same key is removed."""
        self.declined.append(why)
        with contextlib.suppress(OSError):
            self._path(namespace, key).unlink(missing_ok=True)


class Layered:
    """A memory layer over another store: what one run reads or writes twice, it reads once."""

    def __init__(self, below: Any) -> None:
        self.below = below
        self.memory: dict[tuple[str, str], Any] = {}

    def get(self, namespace: str, key: str) -> Any | None:
        value = self.memory.get((namespace, key))
        if value is None:
            value = self.below.get(namespace, key)
            if value is not None:
                self.memory[(namespace, key)] = value
        return value

    def put(self, namespace: str, key: str, value: Any) -> None:
        self.memory[(namespace, key)] = value
        self.below.put(namespace, key, value)

    def decline(self, namespace: str, key: str, why: str) -> None:
        self.memory.pop((namespace, key), None)
        self.below.decline(namespace, key, why)


# The course tree's digest ------------------------------------------------------------------------


class TreeDigest:
    """The content hash of every file under the course folder, memoised by stat tuple."""

    def __init__(self, course_dir: Path, table_path: Path) -> None:
        self.course_dir = course_dir
        self.table_path = table_path
        self.files: dict[str, str] = {}  # relative path -> sha256 of its bytes
        self.folders: set[str] = set()  # relative paths: an empty folder matters to the loader
        self.safe = True  # False: the tree holds something the digest cannot vouch for
        self.changed = False  # the stat table needs writing back

    def compute(self) -> str | None:
        table = _read_json(self.table_path)
        written = 0
        known: dict[str, list[Any]] = {}
        if (
            isinstance(table, dict)
            and isinstance(table.get("files"), dict)
            and type(table.get("written_ns")) is int  # a damaged table is no table
        ):
            written = table["written_ns"]
            known = table["files"]
        fresh: dict[str, list[Any]] = {}
        now = time.time_ns()
        for rel, st in self._walk():
            if not self.safe:
                return None
            stamp = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]
            old = known.get(rel)
            racy = max(st.st_mtime_ns, st.st_ctime_ns) >= written - RACY_NS
            if (
                isinstance(old, list)
                and len(old) == 6
                and old[:5] == stamp
                and isinstance(old[5], str)
                and not racy
            ):
                digest = old[5]
            else:
                try:
                    digest = file_digest(self.course_dir / rel, st)
                except OSError:
                    self.safe = False
                    return None
                self.changed = True
            self.files[rel] = digest
            fresh[rel] = [*stamp, digest]
        if not self.safe:  # the walk stopped early: a link, a device, an unreadable folder
            return None
        if set(fresh) != set(known):
            self.changed = True
        self._fresh = fresh
        self._now = now
        listing = [f"{rel}\0{digest}" for rel, digest in self.files.items()]
        listing += [f"{rel}/\0folder" for rel in self.folders]
        return sha256("\n".join(sorted(listing)))

    def save(self) -> None:
        """Write the stat table back (only what compute() saw), stamped with when it was read."""
        if self.changed and self.safe:
            _write_json(self.table_path, {"written_ns": self._now, "files": self._fresh})

    def _walk(self) -> Iterable[tuple[str, os.stat_result]]:
        """Every file below the course folder. A symbolic link makes the tree unsafe to digest
        (its target may lie anywhere), and so does anything unreadable."""
        stack = [("", str(self.course_dir))]
        while stack:
            prefix, folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                self.safe = False
                return
            for entry in entries:
                rel = prefix + entry.name
                if not prefix and entry.name == CACHE_DIR:
                    continue  # a course folder that is the project root holds the cache
                if entry.is_symlink():
                    self.safe = False
                    return
                if entry.is_dir(follow_symlinks=False):
                    self.folders.add(rel)
                    stack.append((rel + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    yield rel, entry.stat(follow_symlinks=False)
                else:
                    self.safe = False  # a fifo, a socket, a device: not a course file
                    return


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
        options: Mapping[str, Any],
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

    def _digest(self) -> tuple[str | None, TreeDigest]:
        tree = TreeDigest(self.course_dir, self.root / FORMAT / "files.json")
        content = tree.compute()
        if content is None:
            return None, tree
        config_bytes = b""
        with contextlib.suppress(OSError):
            config_bytes = (self.project_root / "pyproject.toml").read_bytes()
        parts = {
            "tree": content,
            "files": len(tree.files),
            "pyproject": sha256(config_bytes),
            "settings": self.settings,
            "root": str(self.project_root),
            "course": str(self.course_dir),
            "env": dict(self._env) if self._env is not None else environment(),
        }
        return sha256(json.dumps(parts, sort_keys=True, default=repr)), tree

    def _entry_path(self, key: str) -> Path:
        return self.root / FORMAT / "runs" / f"{key}.json"

    def lookup(self) -> tuple[str, int] | None:
        self.key, self.tree = self._digest()
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

    def record(self, output: str, code: int) -> bool:
        if self.key is None or self.tree is None:
            return False
        after, tree = self._digest()
        if after != self.key:
            return False  # something changed while the run was reading it
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
    options: Mapping[str, Any],
    config_fingerprint: str,
) -> dict[str, Any]:
    """The run's settings that shape its output (callables such as `progress` are left out)."""
    return {
        "format": output_format,
        "color": color,
        "paths": list(paths),
        "options": {
            k: v
            for k, v in sorted(options.items())
            if k not in NOT_IN_KEY and (isinstance(v, str | int | float | bool) or v is None)
        },
        "config": config_fingerprint,
    }
