"""A forked child that does some work and answers through a pipe, while this process goes on.

The cache's lookups use a second processor this way: the warm path compares half a record's
stamps in one (`coursekit.warm`), the whole-run lookup half the stat table's
(`coursekit.cache_stats`) or the whole tree digest (`coursekit.cache_tree`). The answer is
marshal bytes (marshal refuses a cut one), so it is any value marshal holds.

Standard library only, and only what the warm path has loaded (os, marshal): a warm run that
compares two halves of its record imports this module, and `typing` and `contextlib` were
~7 ms of a ~60 ms replay.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

NO_ANSWER = object()  # what `collected` gives for a child that did not answer


def discard(child: tuple[int, int], kill: bool = False) -> None:
    """A child (`in_child`'s) waited for, its answer unread. Not killed unless `kill` (a child
    that writes nothing): one that writes (the stat table) writes it whole or not at all (its
    answer's pipe is closed: it ends, at the latest, on writing it)."""
    pid, read_end = child
    _quietly(os.close, read_end)
    if kill:
        _quietly(os.kill, pid, 9)
    reaped(pid)


def _quietly(call: Callable[..., object], *args: int) -> None:
    """`call(*args)`, an OSError ignored (`contextlib.suppress`, which the warm path does not
    import)."""
    try:
        call(*args)
    except OSError:
        return


def in_child(
    work: Callable[[], Any], then: Callable[[], object] | None = None, large: bool = False
) -> tuple[int, int] | None:
    """A forked child doing `work` (its pid and the pipe it answers on, as marshal bytes), or
    None when no child could be forked. `then` is done by the child after it answered and
    closed the pipe: the parent may go on with the answer meanwhile (`collected(reap=False)`).
    `large`: the answer is megabytes, and the pipe is made as large as the system lets (by
    default 64 KB, the child waits for the parent to read each 64 KB before it writes more)."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    if large:
        _widened(write_end)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: it writes its answer and exits, flushing nothing of the run's
        status = 1
        try:
            os.close(read_end)
            view = memoryview(marshal.dumps(work()))
            while view:
                view = view[os.write(write_end, view) :]
            os.close(write_end)
            if then is not None:
                then()
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _widened(pipe: int) -> None:
    """The pipe as large as an unprivileged process may make it (`/proc/sys/fs/pipe-max-size`,
    1 MB by default), where there is such a thing; as it was, elsewhere."""
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size", "rb") as limit:
            size = int(limit.read())
        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, min(size, 1 << 22))
    except (ImportError, AttributeError, OSError, ValueError):
        return


def collected(child: tuple[int, int] | None, reap: bool = True) -> Any:
    """The child's answer (waited for); `NO_ANSWER` for no child, or one that failed. With
    `reap` False the answer is taken as soon as the child closed the pipe, whole (marshal
    refuses a cut one), and the caller reaps the child (`reaped`) once what it does after
    answering is wanted."""
    if child is None:
        return NO_ANSWER
    pid, read_end = child
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        os.close(read_end)
    if reap and not reaped(pid):
        return NO_ANSWER
    if not chunks:
        return NO_ANSWER
    try:
        return marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        return NO_ANSWER


def reaped(pid: int) -> bool:
    """Whether the child (waited for) exited with status 0."""
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return False
    return status == 0
