"""The warm path: replay a `check` whose every input is provably unchanged, before the command
line (click, pydantic, tomllib, json, hashlib) is imported.

A *record* is written by the normal path (`coursekit.cache_warm`) when the whole-run cache
replays a run. It holds:

* the key material, compared for equality: the record format, `sys.argv[1:]`, the working
  directory, the interpreter (`sys.executable`, `sys.version`), the whole environment and
  whether stdin, stdout and stderr are terminals;
* the paths (those below the working directory relative to it: `below_cwd`) and their
  stamps (file type and mode, mtime_ns, ctime_ns, size, inode, device; six zeros for a path
  that must be absent): every file and folder of the course, the
  project's pyproject.toml and journal, the folders project discovery reads, coursekit's own
  files and the folders Python imports from. A folder's stamp moves when an entry is added,
  removed or renamed, so a new file is seen without listing any folder. They are kept in
  *parts* (the paths, and their stamps as six native int64 each): the most recently changed
  first, then the rest in two halves;
* the output and the exit code.

Here a record is found from the command line alone (a file name derived from the key
material, probed in `.coursekit_cache/` of the working directory and its ancestors, and of
`--course`'s parent), checked (its checksum, its key material, then one `os.lstat` per path
compared with its stamp, the most recently changed paths first; on a large course the two
halves at once, as one `lstat` costs a system call and a course of 1,000 chapters has 28,000
paths) and replayed. The stamps are taken in C where `coursekit._stamps` was built (~1.3 against
~2.5 us a path here, and without the interpreter's lock, so a second thread takes a half), else
in Python with a forked child taking a half. Anything
unexpected, a damaged or foreign record included, is a miss: the caller then runs the normal
command line, which gives the same output.

Standard library only (and coursekit's own C module), and only modules the interpreter has
loaded anyway or that cost microseconds (os, sys, marshal, binascii, _thread, `sealed`): this
module is the whole of a warm run.
"""

from __future__ import annotations

import os
import sys

from coursekit import warm_stamps
from coursekit.sealed import seal, unseal

RECORD_FORMAT = 4  # bump when the record's shape or the key material changes
MAGIC = b"coursekit-warm\0%d\0" % RECORD_FORMAT
# Where records live: `<project>/.coursekit_cache/<cache FORMAT>/warm/` (cache_files.CACHE_DIR
# and FORMAT; tests/test_warm_path.py keeps the spellings equal).
FOLDER = os.path.join(".coursekit_cache", "v1", "warm")
# What the fast path never replays: its output depends on git (--changed), it writes a file
# (-o/--output-file), it asks not to use the cache, or it is not a check at all.
NEVER = ("--changed", "--no-cache", "--output-file", "-o", "--help", "-h", "--version")
MAX_RECORD_BYTES = 1 << 30


def key_material(argv: list[str] | None = None) -> str:
    """Everything besides the watched paths that a replayed run's output depends on, as one
    string (NUL cannot occur in an argument, a path or the environment): for this process's
    command line, or for `coursekit ARGV` started just as this process was (the daemon's)."""
    args = sys.argv[1:] if argv is None else argv
    ttys = "".join("1" if isatty(stream) else "0" for stream in (0, 1, 2))
    parts = [str(RECORD_FORMAT), os.getcwd(), sys.executable, sys.version, ttys]
    parts.append(str(len(args)))
    parts += args
    for name, value in sorted(os.environ.items()):
        if name != "_":  # the shell's last command (`time coursekit` sets it to time's path)
            parts += (name, value)
    return "\0".join(parts)


def isatty(fd: int) -> bool:
    """Whether the descriptor is a terminal (False for a closed one)."""
    try:
        return os.isatty(fd)
    except OSError:
        return False


def record_name(key: str) -> str:
    """The record's file name: a checksum of the key material (a collision is only a miss,
    since the record holds the key material itself)."""
    import binascii

    data = key.encode("utf-8", "surrogateescape")
    return f"{binascii.crc32(data):08x}-{len(data):x}.rec"


def replayable(argv: list[str]) -> bool:
    """Whether this command line may be answered from a record at all."""
    if not argv or argv[0] != "check":
        return False
    for token in argv[1:]:
        if token == "--":
            break
        if token.startswith(NEVER):
            return False
        if token.startswith("-") and not token.startswith("--") and "o" in token:
            return False  # -o among short options (`-oFILE`)
    return True


def below_cwd(paths: list[bytes], cwd: bytes) -> list[bytes]:
    """The paths, those below the working directory `cwd` made relative to it
    (`warm_recent.relative`): how a record lists them."""
    from coursekit.warm_recent import relative

    return [relative(path, cwd) for path in paths]


def encode(key: str, paths: list[bytes], flat: list[int], output: str, code: int) -> bytes:
    """A record's bytes: the magic, a checksum of the rest, then the marshalled fields."""
    return seal(MAGIC, (key, warm_stamps.parts_of(paths, flat), output, code))


def decode(data: bytes) -> tuple[str, list[tuple[bytes, bytes]], str, int] | None:
    """The fields of a record's bytes, or None when they are not a whole record of this format."""
    fields = unseal(MAGIC, data)
    if not (isinstance(fields, tuple) and len(fields) == 4):
        return None
    key, parts, output, code = fields
    if not (
        isinstance(key, str)
        and isinstance(parts, list)
        and all(_is_part(part) for part in parts)
        and isinstance(output, str)
        and type(code) is int
    ):
        return None
    return key, parts, output, code


def _is_part(part: object) -> bool:
    return (
        isinstance(part, tuple)
        and len(part) == 2
        and isinstance(part[0], bytes)
        and isinstance(part[1], bytes)
    )


def candidates(argv: list[str], cwd: str) -> list[str]:
    """The folders whose cache may hold this command line's record: the working directory and
    its ancestors (project discovery's search), and `--course DIR`'s parent."""
    folders: list[str] = []
    course = course_argument(argv)
    if course is not None:
        folders.append(os.path.dirname(os.path.join(cwd, course).rstrip(os.sep)) or os.sep)
    folder = cwd
    while True:
        folders.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return folders
        folder = parent


def course_argument(argv: list[str]) -> str | None:
    """What `--course` says in a `check` command line (None: not given)."""
    for index, token in enumerate(argv):
        if token == "--":
            return None
        if token == "--course" and index + 1 < len(argv):
            return argv[index + 1]
        if token.startswith("--course="):
            return token[len("--course=") :]
    return None


def lookup() -> tuple[str, int] | None:
    """The stored output and exit code of this very command line, if a record vouches for it."""
    argv = sys.argv[1:]
    if not replayable(argv):
        return None
    key = key_material()
    name = record_name(key)
    for folder in candidates(argv, os.getcwd()):
        found = _read(folder, name)
        fields = decode(found[0]) if found is not None else None
        if found is None or fields is None or fields[0] != key:
            continue
        _, parts, output, code = fields
        # First the course's most recently changed paths as the stat table last saw them: an
        # edit after this record was written is found there in a few stats (`warm_recent`).
        from coursekit import warm_recent

        recent = _read(folder, warm_recent.NAME, os.path.dirname(FOLDER), warm_recent.MAX_BYTES)
        watched = [part[0] for part in parts]
        cwd = os.fsencode(os.getcwd())
        change = (
            None if recent is None else warm_recent.change_since(*recent, found[1], watched, cwd)
        )
        if change is not None:
            warm_stamps.newest_change_ns = change
            return None
        if warm_stamps.unchanged(parts):
            # what the normal path could not print either (an encoding the output does not
            # fit) is for it to report
            output.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict")
            return output, code
        return None  # this command line's record, and something it watches changed
    return None


def _read(
    project: str, name: str, where: str = FOLDER, limit: int = MAX_RECORD_BYTES
) -> tuple[bytes, int] | None:
    """The file `name` in `where` under `project` (a record, by default) and when it was
    written, reached without a symbolic link (as the cache is used:
    coursekit.cache_files.inside_cache), or None."""
    folder = project
    for part in where.split(os.sep):
        folder = os.path.join(folder, part)
        try:
            if os.lstat(folder).st_mode & 0o170000 != 0o040000:  # not a folder (a link, a file)
                return None
        except OSError:
            return None
    try:
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with open(fd, "rb") as handle:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000 or st.st_size > limit:
            return None  # not a record of ours
        return handle.read(), st.st_mtime_ns


def replay() -> None:
    """Write a vouched-for run's output and exit with its code; on a miss, return having written
    nothing. Every error while looking is a miss: the normal command line then answers."""
    try:
        hit = lookup()
    except Exception:
        return
    if hit is None:
        return
    emit(*hit)


def emit(output: str, code: int, error: str = "") -> None:
    """Write a replayed run's standard error and output, then exit with its code."""
    try:
        if error:
            sys.stderr.write(error)
            sys.stderr.flush()
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        # `coursekit check | head`: the reader left; say nothing more, as the normal path does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 1
    # What a normal exit would add is tearing down the record's objects: nothing to flush,
    # no exit handler of this process's (the standard library's are not imported).
    os._exit(code)
