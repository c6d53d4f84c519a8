"""How a `check` reaches a running daemon (`coursekit daemon start`), standard library only.

A daemon answers one command line: the `check` it was started for, from the same working
directory, interpreter, environment and terminals (`warm.key_material`, the warm path's key).
Its socket is named by that key (`warm.record_name`) in `.coursekit_cache/v1/daemon/` of the
project, found as the warm path finds its records. A command line no daemon answers costs one
`lstat` per folder probed; every error while asking is a miss, and the normal command line
then answers.

A request is the key material; the reply is (status, stdout, stderr, exit code). Only "ok" is
replayed: "miss" (another key), "gone" (what the daemon watches outside the course changed,
say coursekit itself: it then exits) and anything unexpected leave the work to the caller.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys

from coursekit import warm

# `typing` would cost the warm path 4 ms of its 20 at 100 chapters; mypy takes any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    # A connected stream socket: `socket.socket` in the daemon; the client uses `_socket`'s,
    # which imports in a tenth of a millisecond where `socket` takes 8 ms.
    from _socket import socket as Connection
    from typing import Any

FOLDER = os.path.join(".coursekit_cache", "v1", "daemon")
MAGIC = b"coursekit-daemon\0" + b"1\0"
MAX_MESSAGE = 1 << 30
# A reply waits for the daemon's run (an edit brings a claim to verify, a program to run); past
# this, the caller checks for itself.
REPLY_SECONDS = 600.0
OK, MISS, GONE, STOP = "ok", "miss", "gone", "stop"


def socket_name(key: str) -> str:
    return warm.record_name(key)[: -len(".rec")] + ".sock"


def short_path(folder_fd: int, name: str) -> str:
    """A path to `name` in the folder open as `folder_fd` that fits a socket address (108
    bytes, however deep the project lies): through the process's own file descriptor."""
    return f"/proc/self/fd/{folder_fd}/{name}"


def open_folder(project: str) -> int | None:
    """The project's daemon folder, opened without following a link on the way, and only when
    it is this user's own (a socket there could be anyone's otherwise), or None."""
    folder = project
    for part in FOLDER.split(os.sep):
        folder = os.path.join(folder, part)
        try:
            st = os.lstat(folder)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


def send(sock: Connection, value: Any) -> None:
    body = marshal.dumps(value)
    sock.sendall(MAGIC + len(body).to_bytes(8, "big") + body)


def receive(sock: Connection) -> object:
    """One message's value; ValueError when the peer sent anything else."""
    head = _exactly(sock, len(MAGIC) + 8)
    if not head.startswith(MAGIC):
        raise ValueError("not a coursekit daemon message")
    size = int.from_bytes(head[len(MAGIC) :], "big")
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    return marshal.loads(_exactly(sock, size))


def _exactly(sock: Connection, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ValueError("the peer closed the connection early")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def ask(project: str, name: str, request: object, timeout: float = REPLY_SECONDS) -> object:
    """The daemon's reply to `request` at socket `name` of `project`, or None when no daemon of
    this user's listens there (or it failed to answer whole)."""
    fd = open_folder(project)
    if fd is None:
        return None
    try:
        try:
            st = os.lstat(name, dir_fd=fd)
        except OSError:
            return None
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
            return None
        import _socket

        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(short_path(fd, name))
            send(sock, request)
            return receive(sock)
        finally:
            sock.close()
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        os.close(fd)


def lookup() -> tuple[str, str, int] | None:
    """(stdout, stderr, exit code) of this very command line, from the daemon that answers it."""
    argv = sys.argv[1:]
    if not warm.replayable(argv):
        return None
    # The key (~50 µs, which the warm path then works out again) only where a daemon may be.
    folders = [
        f for f in warm.candidates(argv, os.getcwd()) if os.path.lexists(os.path.join(f, FOLDER))
    ]
    if not folders:
        return None
    key = warm.key_material()
    name = socket_name(key)
    for folder in folders:
        reply = ask(folder, name, key)
        if reply is None:
            continue
        if (
            isinstance(reply, tuple)
            and len(reply) == 4
            and reply[0] == OK
            and isinstance(reply[1], str)
            and isinstance(reply[2], str)
            and type(reply[3]) is int
        ):
            return reply[1], reply[2], reply[3]
        return None  # this command line's daemon, and it would not answer: the normal path
    return None


def replay() -> None:
    """Write the daemon's answer and exit with its code; on a miss, return having written
    nothing."""
    try:
        hit = lookup()
        if hit is None:
            return
        out, err, code = hit
        out.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict")
    except Exception:
        return
    warm.emit(out, code, err)
