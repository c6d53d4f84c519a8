"""Reading untrusted files and YAML into plain data plus a table of positions.

Whatever the bytes, the result is data or a `LoadError` with a line and column: size, encoding,
NUL bytes, links out of the tree, syntax, alias bombs and deep nesting are all bounded here.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from coursekit.load import codes
from coursekit.model.base import Source, YamlPath

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_VALUES = 50_000  # after alias expansion: a "billion laughs" stops here (a real file: < 5,000)
MAX_DEPTH = 100


class LoadError(Exception):
    def __init__(self, code: str, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column


def read_text(path: Path, root: Path) -> str:
    """The file's text, refusing what a course file can never be."""
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise LoadError(
                codes.UNREADABLE, f"'{path.name}' is a link that leads outside the course"
            )
        size = resolved.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LoadError(
                codes.UNREADABLE,
                f"file is {size / 1_048_576:.1f} MiB; course files are capped at "
                f"{MAX_FILE_BYTES // 1_048_576} MiB",
            )
        data = resolved.read_bytes()
    except OSError as exc:
        raise LoadError(codes.UNREADABLE, f"cannot read file: {exc.strerror or exc}") from None
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


def _position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


_local = threading.local()


def _yaml() -> YAML:
    parser: YAML | None = getattr(_local, "yaml", None)
    if parser is None:
        parser = YAML(typ="rt")
        _local.yaml = parser
    return parser


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where the text nests past MAX_DEPTH, found by a linear scan before the parser sees it.

    The parser recurses once per level, and a Python stack thousands of frames deep takes
    seconds to unwind: a bracket or indentation count up front answers in microseconds. The
    count is an upper bound (brackets inside strings count too), so the limit is generous.
    """
    depth = 0
    for number, line in enumerate(text.split("\n"), start=1):
        lead = len(line) - len(line.lstrip(" -?:"))
        if lead > 4 * MAX_DEPTH:
            return number, lead + 1
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


def parse_yaml(text: str, path: str, line_offset: int = 0) -> tuple[Any, Source]:
    """Plain data (dicts, lists, scalars) and where each value sits, or a LoadError."""
    deep = _too_deep(text)
    if deep is not None:
        raise LoadError(
            codes.YAML_SYNTAX,
            f"nested deeper than {MAX_DEPTH} levels",
            deep[0] + line_offset,
            deep[1],
        )
    try:
        tree = _yaml().load(text)
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
    budget = [MAX_VALUES]
    try:
        data = _plain(tree, (), source, budget, 0)
    except RecursionError:
        raise LoadError(codes.YAML_SYNTAX, "YAML nested too deeply", 1 + line_offset) from None
    if isinstance(tree, CommentedMap | CommentedSeq):
        source.values[()] = (tree.lc.line + 1, tree.lc.col + 1)
    return data, source


def _plain(value: Any, path: YamlPath, source: Source, budget: list[int], depth: int) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        line, column = source.values.get(path[:-1], (1, 1)) if path else (1, 1)
        raise LoadError(
            codes.YAML_SYNTAX,
            f"document expands to more than {MAX_VALUES:,} values (an alias bomb?)",
            line + source.line_offset,
            column,
        )
    if depth > MAX_DEPTH:
        line, column = source.values.get(path[:-1], (1, 1))
        raise LoadError(
            codes.YAML_SYNTAX,
            f"nested deeper than {MAX_DEPTH} levels",
            line + source.line_offset,
            column,
        )
    if isinstance(value, CommentedMap):
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, CommentedMap | CommentedSeq):
                kl, kc = value.lc.key(key) if key in value else (value.lc.line, value.lc.col)
                raise LoadError(
                    codes.YAML_SYNTAX,
                    "a mapping or list used as a key",
                    kl + 1 + source.line_offset,
                    kc + 1,
                )
            name = _scalar(key)
            name = name if isinstance(name, str) else str(name)
            sub = (*path, name)
            kline, kcol = value.lc.key(key)
            vline, vcol = value.lc.value(key)
            source.keys[sub] = (kline + 1, kcol + 1)
            source.values[sub] = (vline + 1, vcol + 1)
            result[name] = _plain(item, sub, source, budget, depth + 1)
        return result
    if isinstance(value, CommentedSeq):
        items: list[Any] = []
        for index, item in enumerate(value):
            sub = (*path, index)
            line, col = value.lc.item(index)
            source.values[sub] = (line + 1, col + 1)
            items.append(_plain(item, sub, source, budget, depth + 1))
        return items
    return _scalar(value)


def _scalar(value: Any) -> Any:
    if value is None or type(value) in (str, int, float, bool):
        return value
    if type(value).__name__ == "ScalarBoolean":
        return bool(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    tagged = getattr(value, "value", None)
    if isinstance(tagged, str):
        return tagged
    return str(value)


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """(front matter YAML, body, 1-based line of the body) or None without front matter."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return None
