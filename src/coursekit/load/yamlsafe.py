"""Reading untrusted files, and the bounds YAML is parsed within (`coursekit.load.yamlparse`).

Whatever the bytes, the result is text or a `LoadError` with a line and column: size, encoding,
NUL bytes and links out of the tree are refused here; nesting too deep to parse is found here
before ruamel sees it. ruamel itself is imported by `yamlparse` alone, so a run that parses no
YAML (an edit, whose documents come from the cache) does not import it (~7 ms).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from coursekit import codes, collector
from coursekit.bounds import MAX_FILE_BYTES  # one cap: the cache keys larger files by stat
from coursekit.frontmatter import front_matter

MAX_VALUES = 50_000  # after alias expansion: a "billion laughs" stops here (a real file: < 5,000)
MAX_DEPTH = 100


class LoadError(Exception):
    def __init__(self, code: str, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column


class RealFolders:
    """Where a course file really lies, with each folder resolved once per load.

    A file that is not itself a symbolic link lies where its folder really is: one `lstat` per
    file instead of a `realpath` (a syscall per path segment) for it and another for the root.
    """

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)
        self._folders: dict[str, str] = {os.path.normpath(root): self.root}

    def folder(self, folder: str) -> str:
        """The folder's real path: its parent's and its own name, unless it is a link itself
        (one `lstat` per folder, where `realpath` takes one per segment of every path)."""
        real = self._folders.get(folder)
        if real is None:
            parent = os.path.dirname(folder)
            try:
                linked = parent == folder or stat.S_ISLNK(os.lstat(folder).st_mode)
            except OSError:
                linked = True  # realpath says what it can; opening the file will fail
            if linked:
                real = os.path.realpath(folder)
            else:
                real = os.path.join(self.folder(parent), os.path.basename(folder))
            self._folders[folder] = real
        return real

    def inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)


def read_text(path: Path, root: Path | RealFolders) -> str:
    """The file's text, refusing what a course file can never be."""
    folders = root if isinstance(root, RealFolders) else RealFolders(root)
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            try:
                resolved = str(path.resolve())
            except RuntimeError:  # Python 3.11 raises this, not OSError, for a symlink loop
                raise LoadError(
                    codes.UNREADABLE, f"'{path.name}' is a symbolic link that loops"
                ) from None
            st = os.stat(resolved)
        else:
            resolved = os.path.join(folders.folder(os.path.dirname(path)), path.name)
        if not folders.inside(resolved):
            raise LoadError(
                codes.UNREADABLE, f"'{path.name}' is a link that leads outside the course"
            )
        if not stat.S_ISREG(st.st_mode):  # a fifo would block the read forever
            raise LoadError(codes.UNREADABLE, "not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise LoadError(
                codes.UNREADABLE,
                f"file is {st.st_size / 1_048_576:.1f} MiB; course files are capped at "
                f"{MAX_FILE_BYTES // 1_048_576} MiB",
            )
        with open(resolved, "rb") as handle:
            # A read of n bytes first allocates n: asking for the cap (4 MiB) every time made
            # each read of a small file an mmap and munmap of 4 MiB unless the allocator
            # happened to serve it from its heap (18,000 files at 1,000 chapters). Ask for
            # what the stat said, plus one byte to see whether the file grew since; what it
            # grew by is read up to the cap, so the read is bounded either way.
            data = handle.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += handle.read(MAX_FILE_BYTES + 1 - len(data))
    except OSError as exc:
        raise LoadError(codes.UNREADABLE, f"cannot read file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(
            codes.UNREADABLE,
            f"file is over {MAX_FILE_BYTES // 1_048_576} MiB; course files are capped there",
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        line, column = _position(data, nul)
        raise LoadError(
            codes.UNREADABLE, "binary content (a NUL byte): not a text file", line, column
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        raise LoadError(
            codes.UNREADABLE, f"not valid UTF-8: byte 0x{data[exc.start]:02x}", line, column
        ) from None


def check_unsaved(text: str) -> str:
    """An editor's unsaved buffer, refused for the same reasons as a file on disk."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: JSON can carry one, UTF-8 cannot
        line = text.count("\n", 0, exc.start) + 1
        column = exc.start - (text.rfind("\n", 0, exc.start) + 1) + 1
        raise LoadError(
            codes.UNREADABLE, "not valid UTF-8: a lone surrogate", line, column
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(
            codes.UNREADABLE,
            f"buffer is {len(data) / 1_048_576:.1f} MiB; course files are capped at "
            f"{MAX_FILE_BYTES // 1_048_576} MiB",
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        line, column = _position(data, nul)
        raise LoadError(
            codes.UNREADABLE, "binary content (a NUL byte): not a text file", line, column
        )
    return text


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def too_deep(text: str) -> tuple[int, int] | None:
    """Where the text nests past MAX_DEPTH, found by a linear scan before the parser sees it.

    The parser recurses once per level, and a Python stack thousands of frames deep takes
    seconds to unwind: a bracket or indentation count up front answers in microseconds. The
    count is an upper bound (brackets inside strings count too), so the limit is generous.
    """
    # depth never passes the number of brackets opened: with few of them, only leads count
    many_brackets = text.count("[") + text.count("{") > MAX_DEPTH
    depth = 0
    for number, line in enumerate(text.split("\n"), start=1):
        lead = len(line) - len(line.lstrip(" -?:"))
        if lead > 4 * MAX_DEPTH:
            return number, lead + 1
        if not many_brackets:
            continue
        for column, char in enumerate(line, start=1):
            if char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return number, column
            elif char in "]}":
                depth = max(0, depth - 1)
            elif char == "#" and (column == 1 or line[column - 2] in " \t"):
                break
    return None


# How many documents this process has parsed (the loader's collector reads it: parsing YAML
# leaves garbage cycles, building from the cache does not).
_PARSED = [0]


def parsed_documents() -> int:
    return _PARSED[0]


def count_parse() -> None:
    """One more document parsed (`yamlparse.parse_yaml` says so)."""
    _PARSED[0] += 1
    collector.parsed()


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """(front matter YAML, body, 1-based line of the body) or None without front matter."""
    found = front_matter(text)
    if found is None:
        return None
    closing, body_start = found
    yaml_text = text[text.find("\n") + 1 : closing]
    return yaml_text.removesuffix("\n"), text[body_start:], text.count("\n", 0, closing) + 2


Span = tuple[tuple[int, int], tuple[int, int]]  # 0-based (line, column) start and end


def comment_start(line: str) -> int | None:
    """Index of a `#` that starts a comment (outside quotes), or None."""
    quote: str | None = None
    index = 0
    while index < len(line):
        ch = line[index]
        if quote == "'":
            if ch == "'":
                if line[index + 1 : index + 2] == "'":
                    index += 1
                else:
                    quote = None
        elif quote == '"':
            if ch == "\\":
                index += 1
            elif ch == '"':
                quote = None
        elif ch in "'\"" and (index == 0 or line[index - 1] in " [{,:-"):
            quote = ch
        elif ch == "#" and (index == 0 or line[index - 1] in " \t"):
            return index
        index += 1
    return None
