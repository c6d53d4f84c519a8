"""The course folder as a `check`'s lookup saw it: what the load asks instead of the disk."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from coursekit.bounds import names_in, paths_below
from coursekit.cache_files import file_digest, sha256
from coursekit.cache_pack import TEXTS, PackedStore


class SeenTree:
    """The loader's `KnownTree`: the course folder as this run's lookup saw it.

    `files` and `folders` are the tree digest the lookup just took (`cache_tree.TreeDigest`:
    course-relative path -> the SHA-256 of the file's bytes, or its stat over the loader's
    cap; every folder; `folders_in_order`, when the child that took it sent them so, the
    folders sorted): the load asks them, not the disk, what exists, and takes the texts
    from the pack, by content hash. A file whose text the pack does not hold is read, and
    kept only when it read whole and valid and hashes to what the digest took, so a kept text
    is exactly what reading those bytes gives; an edit reads the files it changed, not the
    ~18,000 of a 1,000-chapter course (~0.4 s).

    What the load found is then a function of the digest alone, unless a file read from the
    disk no longer held what the digest saw (an edit while the run ran): `diverged` says so,
    and the store is told it declined a result (`ResultStore.decline`, the mechanism that
    keeps a clock-dependent run from being replayed), so such a run is not recorded under
    the digest's key. A run that did not diverge need
    not stat the tree again to be recorded (`RunCache.record`).

    The texts are ~23 MB of the pack at 1,000 synthetic chapters (27 MB of files, many of them
    alike) and have no `DiskStore` entries: 18,000 more files on a cold run, to spare a
    re-read of what a lost pack loses anyway.
    """

    def __init__(
        self,
        store: PackedStore,
        course_dir: Path,
        files: dict[str, str],
        folders: set[str],
        folders_in_order: list[str] | None = None,
    ) -> None:
        self.store = store
        self.course_dir = course_dir
        self.files = files
        self.folders = folders
        self.diverged = False
        self._sorted: list[str] | None = None
        self._sorted_folders = folders_in_order

    def text(self, path: str) -> str | None:
        digest = self.files.get(path)
        if digest is None:
            return None
        value = self.store.packed(TEXTS, digest)
        return value if type(value) is str else None

    def read(self, path: str, text: str) -> bool:
        digest = self.files.get(path)
        if digest is not None and sha256(text) == digest:
            self.store.pack(TEXTS, digest, text)
            return True
        self._diverge(path)  # not the content the digest took: changed since
        return False

    def digest(self, path: str) -> str | None:
        digest = self.files.get(path)
        return None if digest is None or digest.startswith("stat:") else digest

    def refused(self, path: str) -> None:
        # A file refused for its content (NUL bytes, too large) still holds what the digest
        # took, and a folder refused as a file is still a folder; anything else (gone,
        # replaced) is a tree the digest did not see.
        where = self.course_dir / path
        try:
            st = os.lstat(where)
            if path in self.folders:
                same = stat.S_ISDIR(st.st_mode)
            else:
                digest = self.files.get(path)
                same = stat.S_ISREG(st.st_mode) and file_digest(where, st) == digest
        except OSError:
            same = False
        if not same:
            self._diverge(path)

    def _diverge(self, path: str) -> None:
        self.diverged = True
        why = f"{path} changed while the run read it"
        self.store.decline(TEXTS, self.files.get(path, path), why)

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_dir(self, path: str) -> bool:
        return path == "" or path in self.folders

    def names(self, folder: str) -> list[str]:
        # Bisections of the sorted files and folders (`names_in`): an index of every entry by
        # its folder took ~10 ms at 1,000 chapters, for the book folders a load lists.
        if self._sorted_folders is None:
            self._sorted_folders = sorted(self.folders)
        return names_in(self._files_sorted(), folder) + names_in(self._sorted_folders, folder)

    def files_below(self, folder: str) -> list[str]:
        # One sorted list of the files, a folder's a run of it (`paths_below`): each chapter's
        # walk of its folder took ~0.1 s of a prose edit at 1,000 chapters, asking every name
        # whether it is a folder.
        return paths_below(self._files_sorted(), folder)

    def _files_sorted(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.files)
        return self._sorted
