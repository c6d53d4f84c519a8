"""The warm path's stamps: one `lstat` per watched path, compared with a record's.

A stamp is six integers (file type and mode, mtime_ns, ctime_ns, size, inode, device; six zeros
for a path that must be absent), kept as native int64 bytes. They are taken in C where
`coursekit._stamps` was built (src/coursekit/_stamps.c: ~1.3 against ~2.5 us a path here, and
without the interpreter's lock, so that a second thread takes half of a large course's paths),
else in Python with a forked child taking that half. Both give the same bytes
(tests/test_warm_stamps.py).

Standard library only, and cheap to import: `coursekit.warm` runs it before anything else.
"""

from __future__ import annotations

import os
from _collections_abc import Callable  # (loaded with os; typing would cost the warm path ~7 ms)

native_stamps: Callable[[bytes], bytes] | None
try:  # the stamps taken in C (src/coursekit/_stamps.c), when it was built; else in Python
    from coursekit._stamps import lstat_stamps as native_stamps
except ImportError:
    native_stamps = None

ABSENT = (0, 0, 0, 0, 0, 0)  # the stamp of a path that must not exist (no file has mode 0)
# Stamps are stored as six native int64 per path, the bytes `coursekit._stamps` answers: the
# stamps taken now are compared as bytes. An inode or device number past 2**63 is kept as its
# two's complement (`signed`).
STAMP_BYTES = 8  # (memoryview's and struct's "q")
SIGN = 1 << 63
FIRST_BATCH = 64  # the most recently changed paths, compared before the rest
# From this many paths, a second processor takes half of them (`worth_splitting`): with the
# stamps in Python a forked child, whose fork and exit cost 3-5 ms (measured at 100 and 1,000
# chapters) against ~1.5 ms for 1,000 stamps; with the C stamps a thread, ~0.1 ms to start
# against ~1.3 ms for 1,000 (here and in cache_stats alike).
FORK_FROM = 8192
THREADS_FROM = 1024


def stamps(paths: list[bytes]) -> list[int]:
    """Each path's stamp, flat: one `os.lstat` per path, six integers each (what
    `coursekit._stamps` takes in C)."""
    lstat = os.lstat
    flat: list[int] = []
    for path in paths:
        try:
            st = lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            flat += ABSENT
            continue
        ino, dev = st.st_ino, st.st_dev
        flat += (
            st.st_mode,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_size,
            ino if ino < SIGN else signed(ino),
            dev if dev < SIGN else signed(dev),
        )
    return flat


def signed(value: int) -> int:
    """An unsigned 64-bit number as the int64 of the same bits."""
    return value - (SIGN << 1)


def packed(flat: list[int]) -> bytes:
    """Stamps (`stamps`) as native int64 bytes."""
    from struct import pack

    return pack(f"={len(flat)}q", *flat)


def unpacked(blob: bytes) -> list[int] | None:
    """The stamps a record's bytes hold, or None when they cannot be its bytes."""
    if len(blob) % STAMP_BYTES:
        return None
    return memoryview(blob).cast("q").tolist()


def parts_of(paths: list[bytes], flat: list[int]) -> list[tuple[bytes, bytes]]:
    """The paths and their stamps as a record keeps them: the first `FIRST_BATCH`, then the
    rest in two halves, each as (the paths joined by NUL, the stamps' bytes, `packed`)."""
    from itertools import pairwise

    size = len(ABSENT)
    half = FIRST_BATCH + (len(paths) - FIRST_BATCH + 1) // 2
    bounds = [0, FIRST_BATCH, half, len(paths)] if len(paths) > FIRST_BATCH else [0, len(paths)]
    return [
        (b"\0".join(paths[low:high]), packed(flat[low * size : high * size]))
        for low, high in pairwise(bounds)
    ]


def _stamps_if_changed(part: tuple[bytes, bytes]) -> list[int] | None:
    """The part's stamps now (`stamps`), when one is not the one recorded; else None."""
    joined, blob = part
    if native_stamps is not None:
        now = native_stamps(joined)
        return None if now == blob else unpacked(now) or []
    flat = stamps(joined.split(b"\0") if joined else [])
    return None if unpacked(blob) == flat else flat


# What the last `unchanged` learnt of a change, for the normal path that follows a miss: the
# newest modification or change time among the paths of the part where it found one changed;
# None when it found none. A change newer than the whole-run cache's stat table means a miss
# (`cache_tree.TreeDigest.compute`).
newest_change_ns: int | None = None


def unchanged(parts: list[tuple[bytes, bytes]]) -> bool:
    """Whether every path's stamp is the one recorded, stopping at the first part that is not.
    The first part holds the most recently changed paths (`cache_warm.save`), the likeliest to
    have changed again: an edit to a file of the author's working set is seen after a few dozen
    stats, not one of every path. The two halves after it are compared at the same time
    (`_change_in_both`), when they are large and a second processor is there to take one."""
    global newest_change_ns
    newest_change_ns = None
    if not parts:
        return False
    rest = parts[1:]
    if len(rest) == 2 and worth_splitting(sum(part[0].count(b"\0") + 1 for part in rest)):
        newest_change_ns = _change_in(parts[0])
        if newest_change_ns is None:
            newest_change_ns = _change_in_both(rest[0], rest[1])
    else:
        for part in parts:
            newest_change_ns = _change_in(part)
            if newest_change_ns is not None:
                break
    return newest_change_ns is None


def _change_in(part: tuple[bytes, bytes]) -> int | None:
    """None when every path of the part has its recorded stamp; else the newest modification
    or change time among them (a path now absent counts 0)."""
    flat = _stamps_if_changed(part)
    return None if flat is None else _newest(flat)


def _newest(flat: list[int]) -> int:
    size = len(ABSENT)
    return max((max(flat[i + 1], flat[i + 2]) for i in range(0, len(flat), size)), default=0)


def worth_splitting(paths: int) -> bool:
    """Whether that many paths are worth sharing with a second processor, half each (a thread
    with the C stamps, else a forked child), and one is there."""
    least = THREADS_FROM if native_stamps is not None else FORK_FROM
    return paths >= least and spare_processor()


def spare_processor() -> bool:
    """Whether a second processor may take a share of the stats (here and at the whole-run
    cache's lookup, `coursekit.cache_tree`)."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return False


def _change_in_both(mine: tuple[bytes, bytes], theirs: tuple[bytes, bytes]) -> int | None:
    """`_change_in` of both parts, `theirs` compared at the same time: its stamps taken by a
    second thread when they are taken in C (`native_at_once`), else compared by a forked child;
    with neither to be had, one after the other."""
    if native_stamps is not None:
        taken = native_at_once(mine[0], theirs[0])
        for (_, blob), now in zip((mine, theirs), taken, strict=True):
            if now != blob:
                return _newest(unpacked(now) or [])
        return None
    from coursekit import forked

    child = forked.in_child(lambda: _change_in(theirs))
    change = _change_in(mine)
    if change is not None:
        if child is not None:
            forked.discard(child, kill=True)  # its answer no longer matters
        return change
    if child is None:
        return _change_in(theirs)
    answer = forked.collected(child)
    # a child that failed found no time: 0, a change older than any table (a plain lookup)
    return answer if answer is None or type(answer) is int else 0


def stamps_of(paths: list[bytes]) -> list[int]:
    """`stamps`, taken in C where it was built (a second thread taking half of a large list:
    a warm record's ~28,400 paths at 1,000 chapters, ~70 ms in Python); ValueError when a path
    holds a NUL, as `os.lstat` says it."""
    if native_stamps is None:
        return stamps(paths)
    return taken(b"\0".join(paths), len(paths), worth_splitting(len(paths)))


def taken(joined: bytes, count: int, split: bool) -> list[int]:
    """The C stamps (`native_stamps`, which must be there) of `count` paths joined by NUL, flat
    (`split`: `taken_in_c`); ValueError when they are not `count` paths (a NUL in one)."""
    flat = unpacked(taken_in_c(joined, split))
    if flat is None or len(flat) != len(ABSENT) * count:
        raise ValueError("a path holds a NUL")
    return flat


def taken_in_c(joined: bytes, split: bool) -> bytes:
    """`native_stamps` (which must be there) of the paths joined by NUL; `split`: the second
    half of them taken by a second thread (`native_at_once`)."""
    assert native_stamps is not None
    cut = joined.find(b"\0", len(joined) // 2) if split else -1
    if cut < 0:
        return native_stamps(joined)
    first, second = native_at_once(joined[:cut], joined[cut + 1 :])
    return first + second


def native_at_once(first: bytes, second: bytes) -> tuple[bytes, bytes]:
    """`native_stamps` (which must be there) of two lists of paths joined by NUL at the same
    time: the second by a second thread, as the C stamps run without the interpreter's lock
    (a thread ~0.1 ms to start, where a fork and its child's exit cost 3-5 ms). An error of
    either is raised here, once both are done; with no thread to be had, one after the other."""
    import _thread

    assert native_stamps is not None
    stamped = native_stamps
    done = _thread.allocate_lock()
    done.acquire()
    answer: list[bytes | BaseException] = []

    def take() -> None:
        try:
            answer.append(stamped(second))
        except BaseException as exc:  # (raised in the thread that asked, below)
            answer.append(exc)
        finally:
            done.release()

    try:
        _thread.start_new_thread(take, ())
    except RuntimeError:  # no thread to be had
        done.release()
        answer.append(stamped(second))
    try:
        mine = stamped(first)
    finally:
        done.acquire()  # no thread of ours left stamping when this returns
    theirs = answer[0]
    if isinstance(theirs, BaseException):
        raise theirs
    return mine, theirs
