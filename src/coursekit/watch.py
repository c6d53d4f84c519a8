"""Which files under a folder changed since the last look, told by Linux inotify.

A resident process wants to know what changed between two checks without a stat of every file
(~110 ms for the ~28,000 files of a 1,000-chapter course); inotify tells it at the cost of one
kernel watch per folder. Standard library only: libc is reached through `ctypes`.

Create the `TreeWatch` *before* reading the tree: a file made while the watch is being set up
may be missed, which is harmless only if the tree is read afterwards. When the watch cannot be
trusted, `changes()` returns None ("lost track: assume everything changed") from then on, and
the caller reads the tree afresh under a new watch. Not seen, by the nature of inotify: writes
through a hard link from outside the tree or a shared memory mapping, changes made by another
machine on a network file system, and a rename of a folder above the root.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import struct
import sys

__all__ = ["TreeWatch", "WatchUnavailable"]

# From <sys/inotify.h>; the kernel's values, the same on every Linux architecture.
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_EVENTS = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM
_EVENTS |= IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF
_MASK = _EVENTS | IN_EXCL_UNLINK | IN_ONLYDIR | IN_DONT_FOLLOW  # what to report, then how
_ROOT_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
_HEADER = struct.Struct("=iIII")  # struct inotify_event without its name: wd, mask, cookie, len
_READ_SIZE = 65536
# A folder that vanished (or became a file) before its watch was added: its parent's watch
# reports that disappearance on its own, so it is no reason to give up.
_VANISHED = (errno.ENOENT, errno.ENOTDIR)


class WatchUnavailable(Exception):
    """inotify cannot watch this folder (not Linux, no libc symbol, the watch limit, ...)."""


@functools.cache
def _libc() -> ctypes.CDLL:
    """libc with its three inotify calls typed, loaded once; WatchUnavailable where it has none."""
    if not sys.platform.startswith("linux"):
        raise WatchUnavailable(f"inotify is Linux-only, and this is {sys.platform}")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        # All three return an int, ctypes' default; typed arguments catch a wrong call early.
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError) as error:
        raise WatchUnavailable(f"this C library offers no inotify: {error}") from error
    return libc


def _parse(buffer: bytes) -> list[tuple[int, int, int, bytes]]:
    """The events in one read of an inotify fd, as (wd, mask, cookie, name without its NULs)."""
    events = []
    offset = 0
    while offset + _HEADER.size <= len(buffer):
        wd, mask, cookie, length = _HEADER.unpack_from(buffer, offset)
        offset += _HEADER.size
        name = buffer[offset : offset + length].partition(b"\0")[0]
        offset += length
        events.append((wd, mask, cookie, name))
    return events


class TreeWatch:
    """One inotify watch on every folder from `root` down; `changes()` says what changed."""

    _fd = -1  # (for `__del__`, should `__init__` fail before setting it)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = os.path.abspath(os.fspath(root))
        self._paths: dict[int, str] = {}  # wd -> folder
        self._wds: dict[str, int] = {}  # folder -> wd; _wds[p] == w implies _paths[w] == p
        # Watches we removed (folders moved away): their late events are dropped, not "unknown".
        self._retired: set[int] = set()
        self._lost = False
        self._fd = -1
        self._lib = _libc()
        fd = int(self._lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
        if fd < 0:
            code = ctypes.get_errno()
            hint = " (raise fs.inotify.max_user_instances)" if code == errno.EMFILE else ""
            raise WatchUnavailable(f"inotify cannot start: {os.strerror(code)}{hint}")
        self._fd = fd
        try:
            self._watch_tree(self._root, None)
        except OSError as error:
            self.close()
            why = f"cannot watch {error.filename}: {error.strerror}"
            if error.errno == errno.ENOSPC:
                why += " (the inotify watch limit is reached: raise fs.inotify.max_user_watches)"
            raise WatchUnavailable(why) from error
        self._root_wd = self._wds[self._root]

    def changes(self) -> set[str] | None:
        """Absolute paths created, deleted, written, re-attributed or moved since the last call.

        A folder's path stands for the folder itself; a folder moved away is reported with the
        folders below it the watch knew, not its files, so a caller should treat a reported
        folder as covering whatever it holds under that path. None: lost track (see the module).
        """
        if self._lost or self._fd < 0:
            return None
        changed: set[str] = set()
        while not self._lost:
            try:
                buffer = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                break
            except OSError:
                self._lost = True
                break
            self._handle(_parse(buffer), changed)
        return None if self._lost else changed

    def close(self) -> None:
        """Give the kernel its watches back; safe to call again."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        with contextlib.suppress(AttributeError):  # (`__init__` failed before making them)
            self._paths.clear()
            self._wds.clear()

    def __del__(self) -> None:
        # A watch dropped unclosed (a language server's state, say) must not keep its inotify
        # instance: a user has 128 of them by default.
        self.close()

    def __enter__(self) -> TreeWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handle(self, events: list[tuple[int, int, int, bytes]], changed: set[str]) -> None:
        """Add what `events` changed to `changed`, following folders that come and go."""
        for wd, mask, _cookie, name in events:
            if mask & IN_Q_OVERFLOW:
                self._lost = True
                return
            if wd in self._retired:
                if mask & IN_IGNORED:
                    self._retired.discard(wd)
                continue
            folder = self._paths.get(wd)
            # IN_UNMOUNT anywhere: what now shows at that mount point is unknown.
            if folder is None or mask & IN_UNMOUNT or (wd == self._root_wd and mask & _ROOT_GONE):
                self._lost = True
                return
            path = os.path.join(folder, os.fsdecode(name)) if name else folder
            changed.add(path)
            if mask & IN_IGNORED:
                self._forget(wd)
            elif name and mask & IN_ISDIR and mask & IN_MOVED_FROM:
                self._retire(path, changed)
            elif name and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                try:
                    self._watch_tree(path, changed)
                except OSError:
                    self._lost = True

    def _watch_tree(self, top: str, changed: set[str] | None) -> None:
        """Watch `top` and the folders below it; each entry found goes into `changed`.

        Each folder is listed after its watch is added, so an entry made in between is either
        listed or reported by the watch: files written into a new folder are never missed.
        """
        pending = [top]
        while pending:
            folder = pending.pop()
            try:
                self._add(folder)
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if changed is not None:
                            changed.add(entry.path)
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
            except OSError as error:
                if error.errno not in _VANISHED or folder == self._root:
                    raise

    def _add(self, folder: str) -> None:
        wd = int(self._lib.inotify_add_watch(self._fd, os.fsencode(folder), _MASK))
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), folder)
        # The kernel hands back the wd it already has for a folder it watches under another path
        # (one moved here while we walked): the old path no longer names it.
        known = self._paths.get(wd)
        if known is not None and known != folder and self._wds.get(known) == wd:
            del self._wds[known]
        self._paths[wd] = folder
        self._wds[folder] = wd

    def _forget(self, wd: int) -> None:
        """Drop a watch the kernel ended (its folder deleted); the folders below had their own."""
        folder = self._paths.pop(wd)
        # The path may already name a new folder, made there before this late IN_IGNORED.
        if self._wds.get(folder) == wd:
            del self._wds[folder]

    def _retire(self, top: str, changed: set[str]) -> None:
        """Stop watching a folder moved away and the folders below it; all count as changed."""
        below = top + os.sep
        for folder, wd in list(self._wds.items()):
            if folder == top or folder.startswith(below):
                changed.add(folder)
                del self._wds[folder]
                del self._paths[wd]
                self._retired.add(wd)
                # Fails only when the kernel already ended the watch: its IN_IGNORED is queued.
                self._lib.inotify_rm_watch(self._fd, wd)
