"""The result store's generations: one folder per environment, the oldest swept.

Every entry of the store (`cache.DiskStore`) is keyed by the environment's salt: coursekit's
version and source files, the interpreter, the libraries. A new salt (an upgrade, an edited
editable install, another virtual environment) writes a new copy of every result and never
reads the old ones again: a 1,000-chapter course checked across 17 of them held 127,582
entries (1.2 GB) in one folder. Entries, and the pack of what a run used (`cache_pack`), now
live in a folder per salt (`store/<salt[:16]>/`); a run that writes to its generation marks
it used, and the run that makes a new one removes all but the `KEEP` most recently used (its
own among them) and anything else in the store (the layout before generations, a folder per
namespace). Two environments used in turn (a virtual environment and pre-commit's) keep
both, each its own pack. Sweeping an old generation of a 1,000-chapter course (~7,500
entries) takes well under a second, once per new environment, in a run that computes the
whole course anyway. Anything that fails here is left as it is: the store only ever misses.

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

# Generations kept: the one in use and the two used last before it (a virtual environment and
# pre-commit's used in turn, and what one of them was before its last upgrade). At 1,000
# chapters a generation is ~110 MB: ~7,500 entries (~65 MB) and the pack (~47 MB).
KEEP = 3
_GENERATION = re.compile(r"[0-9a-f]{16}")


def generation(store: Path, salt: str) -> Path:
    """The folder of the salt's entries."""
    return store / salt[:16]


def claim(store: Path, salt: str) -> None:
    """Mark the salt's generation used now, making it (and sweeping the store) if it is new."""
    folder = generation(store, salt)
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        with contextlib.suppress(OSError):
            os.utime(folder, follow_symlinks=False)  # (a link is the sweep's to remove)
        return
    except OSError:
        return
    sweep(store, folder.name)


def sweep(store: Path, current: str) -> list[str]:
    """Remove from the store all but the `KEEP` most recently used generations (`current`
    always kept) and whatever else it holds; the names removed."""
    try:
        entries = list(os.scandir(store))
    except OSError:
        return []
    generations: list[tuple[int, str]] = []
    stale: list[os.DirEntry[str]] = []
    for entry in entries:
        if entry.name == current:
            continue
        try:
            if _GENERATION.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                generations.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
                continue
        except OSError:
            continue
        stale.append(entry)
    generations.sort(reverse=True)
    removed = [name for _, name in generations[KEEP - 1 :]]
    for name in removed:
        shutil.rmtree(store / name, ignore_errors=True)
    for entry in stale:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.name)
    return sorted(removed)
