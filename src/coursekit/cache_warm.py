"""Writing the warm path's records: what a replayed `check` watches (`coursekit.warm` reads them).

The normal path writes a record when the whole-run cache replays a run (not when it computes
one: that follows an edit; `commands.check.run_cached`), for a `check` that depends on nothing outside what the
record watches: not `--changed` (git's state), not `--output-file` (it writes a file), not a
run that named a path outside the course (it printed a note on stderr). What is watched:

* every file and folder below the course folder (a folder's stamp moves when an entry is
  added, removed or renamed);
* the project folder, its pyproject.toml and the journal (which must be absent: a journal
  means an interrupted write the normal path must finish first);
* without `--course`, every folder from the working directory up to the project and, in each,
  what project discovery looks for (`course`, `pyproject.toml`, `.git`);
* coursekit's own files and folders (an edited editable install is a miss);
* the folders Python imports from, with their start-up files (`*.pth`, sitecustomize.py):
  installing or upgrading a library moves the stamp of its site-packages folder.

A symbolic link anywhere in that (or in a path given on the command line) writes no record:
`os.lstat` of a link says nothing about what it points to. Nor does a racily clean stamp
(`cache_stats.RACY_NS`, git's rule): an edit in the same timestamp tick as the record could
leave a stamp unchanged. The next run, after the tick, writes it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import coursekit
from coursekit import warm, warm_stamps
from coursekit.cache import _prune
from coursekit.cache_env import package_entries
from coursekit.cache_files import CACHE_DIR, _prepare, atomic_write, cache_root
from coursekit.cache_stats import stamp_is_racy

if TYPE_CHECKING:
    from coursekit.project import Project

MAX_RECORDS = 8  # kept (one per command line, environment and folder; ~5 MB each at 1,000
# chapters): the oldest are pruned
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")


class Unwatchable(Exception):
    """The run depends on something a record cannot vouch for (a link, a device, a journal)."""


class Recorder:
    """`run_cached`'s callback: record this command line's output once the run is settled."""

    def __init__(
        self, project: Project, explicit_course: bool, paths: Sequence[Path], exit_zero: bool
    ) -> None:
        self.project = project
        self.explicit_course = explicit_course
        self.paths = list(paths)
        self.exit_zero = exit_zero

    def __call__(self, output: str, code: int, course_entries: Sequence[str]) -> bool:
        final = 0 if self.exit_zero and code == 1 else code
        try:
            watched = watched_paths(
                self.project.root,
                self.project.course_dir,
                self.explicit_course,
                self.paths,
                course_entries,
            )
            return save(self.project.root, watched, output, final)
        except (Unwatchable, OSError, ValueError):
            # a path os.lstat refuses (a NUL in it), a value marshal cannot hold: no record,
            # and the run's own output and exit code stand
            return False


def save(root: Path, watched: list[bytes], output: str, code: int, now_ns: int = 0) -> bool:
    """Write the record of this process's command line; False when it must not be (racy) or
    cannot be (the cache is not writable). Unwatchable when a watched path is a symbolic link:
    its stamp says nothing of what it points to."""
    key = warm.key_material()
    watched = warm.below_cwd(watched, os.fsencode(os.getcwd()))
    flat = warm_stamps.stamps_of(watched)
    size = len(warm_stamps.ABSENT)
    if any(stat.S_ISLNK(flat[i]) for i in range(0, len(flat), size)):
        raise Unwatchable("a symbolic link among the watched paths")
    if racy(flat, now_ns or time.time_ns()):
        return False
    watched, flat = recent_first(watched, flat)
    target = root / warm.FOLDER / warm.record_name(key)
    try:
        _prepare(cache_root(root))
        atomic_write(target, warm.encode(key, watched, flat, output, code))
    except OSError:
        return False
    _prune(target.parent, MAX_RECORDS)
    return True


def recent_first(paths: list[bytes], flat: list[int]) -> tuple[list[bytes], list[int]]:
    """The paths and their stamps, the most recently changed first (`warm_stamps.unchanged`
    stops at the first changed stamp, and the file edited last is the likeliest to be edited
    next)."""
    size = len(warm_stamps.ABSENT)
    newest = list(map(max, flat[1::size], flat[2::size]))  # each path's mtime or ctime
    order = sorted(range(len(paths)), key=newest.__getitem__, reverse=True)  # (stable too)
    return [paths[i] for i in order], [v for i in order for v in flat[i * size : (i + 1) * size]]


def racy(flat: Sequence[int], now_ns: int) -> bool:
    """Whether any stamp changed within RACY_NS of `now_ns` (its mtime or ctime: a warm stamp
    is the file type and mode, then a `cache_stats.file_stamp`)."""
    size = len(warm_stamps.ABSENT)
    return any(stamp_is_racy(flat[i + 1 : i + size], now_ns) for i in range(0, len(flat), size))


def watched_paths(
    root: Path,
    course_dir: Path,
    explicit_course: bool,
    paths: Sequence[Path],
    course_entries: Sequence[str],
) -> list[bytes]:
    """Every path the record stamps, as bytes (`os.lstat` takes them as they are).

    `course_entries` are the course's files and folders (relative to it) as the whole-run
    cache's digest just walked them: walking the course again would double the work."""
    course = _real(course_dir)
    project = _real(root)
    if (project / CACHE_DIR / "journal.json").exists():
        raise Unwatchable("an interrupted write's journal")
    for path in paths:
        _real(path)
    watched = [project, project / "pyproject.toml", project / CACHE_DIR / "journal.json"]
    if not explicit_course:
        cwd = Path(os.getcwd())
        for folder in (cwd, *cwd.parents):
            watched += [folder, folder / "course", folder / "pyproject.toml", folder / ".git"]
            if folder == project:
                break
    result = [os.fsencode(p) for p in watched]
    top = os.fsencode(course)
    result.append(top)
    result += [os.path.join(top, os.fsencode(rel)) for rel in course_entries]
    result.append(os.fsencode(Path(coursekit.__file__).parent))
    result += [os.fsencode(path) for path, _ in package_entries()]
    result += _python()
    return result


def _real(path: Path) -> Path:
    """`path` made absolute, which must be its real path: no symbolic link on the way."""
    absolute = os.path.normpath(os.path.abspath(path))
    if os.path.realpath(absolute) != absolute:
        raise Unwatchable(f"{path} is reached through a symbolic link")
    return Path(absolute)


def _python() -> list[bytes]:
    """The folders Python imports from, and the start-up files in them."""
    import site

    folders = [os.path.abspath(entry) for entry in sys.path]
    with contextlib.suppress(AttributeError, OSError):
        folders.append(site.getusersitepackages())
    watched: list[bytes] = []
    for folder in dict.fromkeys(folders):
        watched.append(os.fsencode(folder))
        try:
            names = os.listdir(folder)
        except OSError:
            continue  # absent (stamped so), or a zip archive (its own stamp is enough)
        for name in sorted(names):
            if name.endswith(".pth") or name in STARTUP_FILES:
                watched.append(os.fsencode(os.path.join(folder, name)))
    return watched
