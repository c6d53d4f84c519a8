"""`python -m coursekit.daemon`: the process `coursekit daemon start` leaves running.

It answers one command line, the `check` it was started for (`coursekit.daemon_wire`), by
running that very command line in-process (`coursekit.cli`, so every option means what it
means anywhere) over a course it keeps loaded (`coursekit.resident`). Its standard output
and error are captured and sent back; standard output reads as a terminal when the asking
command's does, so colours match (the progress line, drawn on a terminal's standard error,
is not drawn).

What the answer depends on outside the course is stamped when it starts, and compared before
every answer: the project's configuration and journal, project discovery's paths, coursekit's
own files, the folders Python imports from. When one moved it answers "gone" and exits, and
the asking command checks for itself. It also exits after `IDLE_SECONDS` without a request,
on `coursekit daemon stop`, and on SIGTERM; the socket is removed on the way out.

Only this user may ask: the socket lies in a folder only they can enter, and each caller's
uid is checked (`SO_PEERCRED`).
"""

from __future__ import annotations

import contextlib
import gc
import io
import marshal
import os
import signal
import socket
import stat
import struct
import sys
import time
from pathlib import Path
from typing import Any

from coursekit import daemon_wire as wire
from coursekit import warm
from coursekit.cache_env import package_entries
from coursekit.cache_files import CACHE_DIR, _prepare, cache_root
from coursekit.cache_warm import _python
from coursekit.commands import check as check_command
from coursekit.config import ConfigError
from coursekit.project import Project, find_project
from coursekit.resident import ResidentCourse
from coursekit.watch import WatchUnavailable

IDLE_SECONDS = 3 * 3600
TIDY_AFTER = 5.0  # seconds without a request before the garbage of the last answers goes
LOOK_AFTER = 60.0  # seconds between looks at whether its course folder is still there
REQUEST_SECONDS = 5.0  # a caller that connects sends its request at once


class _Terminated(BaseException):
    """SIGTERM: unwinds whatever runs (not an exit code a command could have given)."""


def _terminate(*_: object) -> None:
    raise _Terminated


class Refused(Exception):
    """The daemon cannot answer this command line (said to `coursekit daemon start`)."""


class _Stream(io.StringIO):
    """A captured standard stream that reads as a terminal when the asker's did."""

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


class Daemon:
    def __init__(self, argv: list[str], key: str, stdout_tty: bool, idle: float) -> None:
        self.argv, self.key, self.stdout_tty, self.idle = argv, key, stdout_tty, idle
        course = warm.course_argument(argv)
        try:
            self.project = find_project(Path.cwd(), Path(course) if course else None)
        except ConfigError as exc:
            raise Refused(str(exc)) from None
        try:
            self.resident = ResidentCourse(self.project)
        except WatchUnavailable as exc:
            raise Refused(f"cannot watch the course: {exc}") from None
        check_command.serve_from(self.resident.run)
        self.course_inode = os.stat(self.resident.course_dir).st_ino
        # The cache folder first: made by the first check, it would move the project folder's
        # stamp (on Python's path under `python -m`) and send the daemon away at once.
        self.folder = _folder(self.project)
        self.outside = _outside(self.project, course is not None)
        self.stamps = _stamps(self.outside)
        self.started = time.time()
        self.answered = 0
        first = self.answer()
        if first is None:
            raise Refused("the first check failed (run `coursekit check` to see why)")
        _tidy()  # the first load's garbage, before anyone waits
        self.name = wire.socket_name(key)
        self.listener = self._bind()

    def answer(self) -> tuple[str, str, int] | None:
        """This command line's output, error and exit code, or None when coursekit failed."""
        from coursekit.cli import main as command_line

        out, err = _Stream(self.stdout_tty), _Stream(False)
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        code: Any = 0
        try:
            command_line(args=self.argv, prog_name="coursekit")
        except SystemExit as exc:
            code = exc.code
        except Exception:
            import traceback

            code = None
            traceback.print_exc(file=saved[1])
        finally:
            sys.stdout, sys.stderr = saved
        if type(code) is not int or code not in (0, 1):
            self.resident.loaded = None  # whatever went wrong, start again from the disk
            self.resident.kept = None
            return None
        return out.getvalue(), err.getvalue(), code

    def _bind(self) -> socket.socket:
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            with contextlib.suppress(FileNotFoundError):
                if wire.ask(str(self.project.root), self.name, ("status",), 5.0) is not None:
                    raise Refused("a daemon already answers this command line here")
                os.unlink(self.name, dir_fd=fd)  # a daemon that did not clean up
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(wire.short_path(fd, self.name))
            listener.listen(16)
            self.inode = os.lstat(self.name, dir_fd=fd).st_ino
        finally:
            os.close(fd)
        return listener

    def serve(self) -> None:
        """Answer callers until told to stop, sent away, or idle; tidy up between answers."""
        untidy = False
        last = time.monotonic()
        try:
            while True:
                left = self.idle - (time.monotonic() - last)
                wait = min(TIDY_AFTER, left) if untidy else max(left, 0.0)
                self.listener.settimeout(max(min(wait, LOOK_AFTER), 0.01))  # (0: non-blocking)
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    if not self._course_there():
                        return  # its course was removed (a temporary checkout, a test's)
                    if untidy and time.monotonic() - last >= TIDY_AFTER:
                        _tidy()
                        untidy = False
                    elif time.monotonic() - last >= self.idle:
                        return  # idle
                    continue
                with conn:
                    if not self._serve_one(conn):
                        return
                gc.freeze()  # what lives on is skipped by the next answer's collections
                untidy, last = True, time.monotonic()
        finally:
            self.close()

    def _course_there(self) -> bool:
        """Whether the course folder it answers for is still the one it started on."""
        try:
            return os.stat(self.resident.course_dir).st_ino == self.course_inode
        except OSError:
            return False

    def _serve_one(self, conn: socket.socket) -> bool:
        """Answer one caller; False when the daemon must now exit."""
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid != os.getuid():
            return True
        conn.settimeout(REQUEST_SECONDS)
        try:
            request = wire.receive(conn)
        except (OSError, ValueError, EOFError, TypeError):
            return True
        reply, go_on = self._reply(request)
        with contextlib.suppress(OSError):
            conn.settimeout(None)
            wire.send(conn, reply)
        return go_on

    def _reply(self, request: object) -> tuple[object, bool]:
        if request == self.key:
            if _stamps(self.outside) != self.stamps:
                return (wire.GONE,), False
            answer = self.answer()
            if answer is None:
                return (wire.MISS,), True
            self.answered += 1
            return (wire.OK, *answer), True
        if request == (wire.STOP,):
            return (wire.STOP, os.getpid()), False
        if request == ("status",):
            resident = self.resident
            counts = (self.answered, resident.loads, resident.patches)
            return ("status", os.getpid(), self.argv, self.started, *counts), True
        return (wire.MISS,), True

    def close(self) -> None:
        self.listener.close()
        with contextlib.suppress(OSError):
            path = os.path.join(self.folder, self.name)
            if os.lstat(path).st_ino == self.inode:  # not a successor's
                os.unlink(path)
        self.resident.close()


def _tidy() -> None:
    """Collect what the answers since the last tidy left, then freeze what lives on.

    A course of 1,000 chapters is a million objects, and every full collection walks all of
    them: one in every other edit added ~0.15 s to its answer. So each answer freezes what it
    leaves (`gc.freeze`, at no cost), and the collections of the next skip it. A cycle frozen
    that way is not collected while frozen, so once no request has come for `TIDY_AFTER`
    seconds the daemon unfreezes, collects everything and freezes again (0.86 s at 1,000
    chapters: a request arriving meanwhile waits for it).
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _folder(project: Project) -> str:
    """The daemon folder, made if needed: this user's alone (mode 0700), not a link."""
    root = cache_root(project.root)
    try:
        _prepare(root)
        folder = os.path.join(project.root, wire.FOLDER)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise Refused(f"{folder} is not a folder of this user's")
        os.chmod(folder, 0o700)
    except OSError as exc:
        raise Refused(f"cannot make the daemon's folder: {exc}") from None
    return folder


def _outside(project: Project, explicit_course: bool) -> list[tuple[bytes, bool]]:
    """What an answer depends on outside the course, as (path, whole stamp): a path whose
    whole stamp is not compared counts only by its kind (project discovery asks whether
    `.git` or `course` is there; a commit touches `.git` every time)."""
    root = project.root.absolute()
    paths: list[tuple[Path | str, bool]] = [
        (root / "pyproject.toml", True),
        (root / CACHE_DIR / "journal.json", True),
    ]
    if not explicit_course:
        cwd = Path(os.getcwd())
        for folder in (cwd, *cwd.parents):
            paths += [(folder / "course", False), (folder / ".git", False)]
            paths.append((folder / "pyproject.toml", True))
            if folder == root:
                break
    paths += [(path, True) for path, _ in package_entries()]
    watched = [(os.fsencode(path), True) for path in _python()]
    return [(os.fsencode(path), whole) for path, whole in paths] + watched


def _stamps(paths: list[tuple[bytes, bool]]) -> list[tuple[int, ...]]:
    """Each path's stamp: a whole one of what it leads to (a pyproject.toml that is a link is
    read through it: its target's edit must be seen), or the kind of the entry itself."""
    found: list[tuple[int, ...]] = []
    for path, whole in paths:
        try:
            st = os.stat(path) if whole else os.lstat(path)
        except OSError:
            found.append(())
            continue
        if whole:
            found.append((st.st_mode, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino))
        else:
            found.append((stat.S_IFMT(st.st_mode),))
    return found


def main() -> None:
    """Read the start message, load the course, say "ready" (or why not), then serve."""
    ready = os.fdopen(os.dup(1), "w", encoding="utf-8")
    try:
        argv, key, environment, stdout_tty, idle = marshal.loads(sys.stdin.buffer.read())
        os.environ.clear()
        os.environ.update(environment)  # the asker's, exactly: `PYTHONPATH` was set to start
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        log = os.environ.get("COURSEKIT_DAEMON_LOG")  # where a failing daemon says why
        if log:
            os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)
        signal.signal(signal.SIGTERM, _terminate)
        daemon = Daemon(list(argv), str(key), bool(stdout_tty), float(idle))
    except Refused as exc:
        ready.write(f"error {exc}\n")
        ready.close()
        sys.exit(1)
    except Exception as exc:
        ready.write(f"error {type(exc).__name__}: {exc}\n")
        ready.close()
        sys.exit(1)
    ready.write(f"ready {os.getpid()}\n")
    ready.close()
    try:
        daemon.serve()
    except _Terminated:
        pass
    except BaseException:
        import traceback

        traceback.print_exc()
        raise


if __name__ == "__main__":
    main()
