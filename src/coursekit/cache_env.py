"""What every cache key includes besides the course: coursekit's own code and version, Python's,
and the versions of the libraries results depend on, all found without importing them.

Standard library only at module level: the warm path (`coursekit.cache`) imports it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import coursekit
from coursekit.cache_files import sha256

LIBRARIES = ("sympy", "numpy", "pydantic", "pydantic_core", "ruamel.yaml", "pylatexenc")


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


def package_entries() -> list[tuple[str, bool]]:
    """coursekit's own files and folders, as (path, is a folder), folder by folder in name
    order, without `__pycache__` (its compiled files follow the sources): what the cache's key
    (`source_fingerprint`) and the warm path's record (`cache_warm`) both watch."""
    found: list[tuple[str, bool]] = []
    stack = [str(Path(coursekit.__file__).parent)]
    while stack:
        folder = stack.pop()
        try:
            scan = list(os.scandir(folder))
        except OSError:
            continue
        for item in sorted(scan, key=lambda e: e.name):
            if item.name == "__pycache__":
                continue
            is_folder = item.is_dir(follow_symlinks=False)
            found.append((item.path, is_folder))
            if is_folder:
                stack.append(item.path)
    return found


def source_fingerprint() -> str:
    """coursekit's own code: its version and every module's (path, mtime, size).

    The version alone would serve stale results from an editable install whose code changed.
    """
    entries: list[str] = [f"coursekit {coursekit.__version__}"]
    for path, is_folder in package_entries():
        if not is_folder and path.endswith(".py"):
            st = os.stat(path)
            entries.append(f"{path}\0{st.st_mtime_ns}\0{st.st_size}")
    return sha256("\n".join(entries))


def environment() -> dict[str, str]:
    """Everything outside the course that a result depends on."""
    env = {
        "coursekit": coursekit.__version__,
        "coursekit_source": source_fingerprint(),
        "python": sys.version,
        **interpreter(),
    }
    for name in LIBRARIES:
        env[name] = library_version(name)
    return env


def interpreter() -> dict[str, str]:
    """The interpreter by what it is, not by the name it was started under: `python`,
    `python3` and `python3.11` of one environment are one file and one `sys.prefix`, so a
    result one of them computed is the others' (keyed by the name, switching between
    `coursekit` and `python -m coursekit` checked the whole course again). The same binary
    in another environment (a venv's `python` is a link to its base interpreter) has that
    environment's libraries: its own key."""
    executable = os.path.realpath(sys.executable) if sys.executable else ""
    return {"executable": executable, "prefix": sys.prefix}


def _salt(env: Mapping[str, str]) -> str:
    return sha256(json.dumps(dict(env), sort_keys=True))
