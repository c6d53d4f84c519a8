"""Reading untrusted files and YAML into plain data plus a table of positions.

Whatever the bytes, the result is data or a `LoadError` with a line and column: size, encoding,
NUL bytes, links out of the tree, syntax, alias bombs and deep nesting are all bounded here.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.compat import _DEFAULT_YAML_VERSION
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.main import CParser  # type: ignore[attr-defined]
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver

from coursekit import codes
from coursekit.bounds import MAX_FILE_BYTES  # one cap: the cache keys larger files by stat
from coursekit.frontmatter import front_matter
from coursekit.model.base import Source, YamlPath

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


_local = threading.local()


class _OneVersionResolver(VersionedResolver):
    """The resolver of the C parser, minus the search for a version on every scalar.

    Under the C parser there is no Python scanner to read a ``%YAML`` directive from, so
    ruamel's lookup always ends at the loader's version or YAML 1.2, after two exceptions
    raised and caught per call (a third of composing a document). This one goes there at once.
    """

    @property
    def processing_version(self) -> Any:
        return self._loader_version or _DEFAULT_YAML_VERSION


def _yaml() -> YAML:
    # The safe loader composes with ruamel's C parser when ruamel.yaml.clib is installed:
    # about 10x faster than the round-trip loader, which also gathers every comment. Checking
    # needs only nodes and their marks; authoring keeps the round trip for writing.
    parser: YAML | None = getattr(_local, "yaml", None)
    if parser is None:
        parser = YAML(typ="safe")
        if parser.Parser is CParser and parser.Resolver is VersionedResolver:
            parser.Resolver = _OneVersionResolver
        _local.yaml = parser
    return parser


def _too_deep(text: str) -> tuple[int, int] | None:
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


def parse_yaml(text: str, path: str, line_offset: int = 0) -> tuple[Any, Source]:
    """Plain data (dicts, lists, scalars) and where each value sits, or a LoadError."""
    _PARSED[0] += 1
    deep = _too_deep(text)
    if deep is not None:
        raise LoadError(
            codes.YAML_SYNTAX,
            f"nested deeper than {MAX_DEPTH} levels",
            deep[0] + line_offset,
            deep[1],
        )
    try:
        tree = _yaml().compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if "expected a single document" in str(exc):
            problem = "more than one YAML document in this file ('---' separates documents)"
        raise LoadError(codes.YAML_SYNTAX, problem, line + line_offset, column) from None
    except RecursionError:
        raise LoadError(
            codes.YAML_SYNTAX, "YAML nested too deeply to parse", 1 + line_offset
        ) from None
    except (YAMLError, ValueError, TypeError) as exc:
        raise LoadError(codes.YAML_SYNTAX, f"invalid YAML: {exc}", 1 + line_offset) from None
    source = Source(path=path, line_offset=line_offset)
    if tree is None:
        return None, source
    source.values[()] = _mark(tree)
    try:
        data = _plain(tree, (), source, [MAX_VALUES], 0)
    except RecursionError:
        raise LoadError(codes.YAML_SYNTAX, "YAML nested too deeply", 1 + line_offset) from None
    return data, source


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _fail(source: Source, at: tuple[int, int], message: str) -> LoadError:
    return LoadError(codes.YAML_SYNTAX, message, at[0] + source.line_offset, at[1])


def _plain(node: Node, path: YamlPath, source: Source, budget: list[int], depth: int) -> Any:
    """Data from a composed node; positions recorded on the way down. Runs no constructor."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _fail(
            source,
            _mark(node),
            f"document expands to more than {MAX_VALUES:,} values (an alias bomb?)",
        )
    if depth > MAX_DEPTH:
        raise _fail(source, _mark(node), f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise _fail(source, _mark(key_node), "a mapping or list used as a key")
            if key_node.tag == MERGE_TAG:
                raise _fail(source, _mark(key_node), "merge keys ('<<') are not supported")
            name = str(key_node.value)
            if name in result:
                raise _fail(source, _mark(key_node), f"found duplicate key '{name}'")
            sub = (*path, name)
            source.keys[sub] = _mark(key_node)
            source.values[sub] = _mark(value_node)
            result[name] = _plain(value_node, sub, source, budget, depth + 1)
        return result
    if isinstance(node, SequenceNode):
        items: list[Any] = []
        for index, item in enumerate(node.value):
            sub = (*path, index)
            source.values[sub] = _mark(item)
            items.append(_plain(item, sub, source, budget, depth + 1))
        return items
    if isinstance(node, ScalarNode):
        return _scalar(node, source)
    raise _fail(source, _mark(node), f"unexpected YAML node {type(node).__name__}")


MERGE_TAG = "tag:yaml.org,2002:merge"
_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")


def _scalar(node: ScalarNode, source: Source) -> Any:
    """A scalar by its resolved YAML 1.2 tag; unknown tags are refused, never constructed."""
    tag, text = node.tag, str(node.value)
    if tag == "tag:yaml.org,2002:str":
        return text
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return text.lower() in ("true", "yes", "on")
    if tag == "tag:yaml.org,2002:int":
        clean = text.replace("_", "")
        try:
            if _INT.match(text):
                return int(clean)
            sign = -1 if clean.startswith("-") else 1
            digits = clean.lstrip("+-").lower()
            base = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2], 10)
            return sign * int(digits[2:] if base != 10 else digits, base)
        except ValueError:
            return text
    if tag == "tag:yaml.org,2002:float":
        lowered = text.lower().replace("_", "")
        if lowered.lstrip("+-") in (".inf", ".nan"):
            return text  # not a number a course states; let the schema say so
        try:
            return float(lowered)
        except ValueError:
            return text
    if tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"):
        return text
    raise _fail(source, _mark(node), f"unsupported YAML tag '{tag}'")


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """(front matter YAML, body, 1-based line of the body) or None without front matter."""
    found = front_matter(text)
    if found is None:
        return None
    closing, body_start = found
    yaml_text = text[text.find("\n") + 1 : closing]
    return yaml_text.removesuffix("\n"), text[body_start:], text.count("\n", 0, closing) + 2


Span = tuple[tuple[int, int], tuple[int, int]]  # 0-based (line, column) start and end


def text_spans(text: str) -> list[Span] | None:
    """Where the document's scalars sit: a `#` inside one is text, not a comment.

    None when the text does not compose (its comments cannot be told from its text then).
    Each node is visited once, so aliases cannot make the walk expensive.
    """
    if _too_deep(text) is not None:
        return None
    try:
        tree = _yaml().compose(text)
    except (YAMLError, ValueError, TypeError, RecursionError):
        return None
    spans: list[Span] = []
    seen: set[int] = set()
    stack: list[Node] = [tree] if tree is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            start, end = node.start_mark, node.end_mark
            spans.append(((start.line, start.column), (end.line, end.column)))
        elif isinstance(node, MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return spans


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
