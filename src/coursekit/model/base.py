"""Located values: every model node remembers the file and YAML path it came from.

The loader attaches a `Source` (file path plus a table of positions) to each node after
validation; rules then ask a node for `loc()` or `loc("field", 3)` and get a `Location` that
points at the exact line and column, without reopening any file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A point in a file: path relative to the project root (POSIX), 1-based line and column."""

    path: str
    line: int = 1
    column: int = 1


@dataclass(slots=True)
class Source:
    """Where a document came from, and where each of its values sits in the file."""

    path: str
    values: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    line_offset: int = 0  # front matter starts below the `---` line

    def value_at(self, path: YamlPath) -> Location:
        """The value at `path`, or the nearest ancestor whose position is known."""
        probe = path
        while True:
            pos = self.position(probe)
            if pos is not None:
                return Location(self.path, pos[0] + self.line_offset, pos[1])
            if not probe:
                return Location(self.path, 1 + self.line_offset, 1)
            probe = probe[:-1]

    def position(self, path: YamlPath, key: bool = False) -> tuple[int, int] | None:
        """Where the value (or, with `key`, the key) at exactly `path` starts, if known; a
        cached document's source answers from its packed tables (`load.parsecache`)."""
        return (self.keys if key else self.values).get(path)

    def key_at(self, path: YamlPath) -> Location:
        pos = self.position(path, key=True)
        if pos is not None:
            return Location(self.path, pos[0] + self.line_offset, pos[1])
        return self.value_at(path)


class Node(BaseModel):
    """Base of every document model: unknown keys are errors, and values know their place."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, populate_by_name=True)

    _source: Source | None = PrivateAttr(default=None)
    _path: YamlPath = PrivateAttr(default=())

    def loc(self, *sub: str | int) -> Location:
        """Location of this node, or of a value below it (`node.loc("claims", 2, "value")`)."""
        if self._source is None:
            return Location("<unknown>")
        return self._source.value_at(self._path + sub)

    def key_loc(self, key: str) -> Location:
        """Location of a key of this mapping (where an author would look for it)."""
        if self._source is None:
            return Location("<unknown>")
        return self._source.key_at((*self._path, key))

    @property
    def source_path(self) -> str:
        return self._source.path if self._source else "<unknown>"

    def attach(self, source: Source, path: YamlPath = ()) -> None:
        """Record where this node and every node below it came from."""
        self._source = source
        self._path = path
        for name, info in type(self).model_fields.items():
            key = info.alias or name
            _attach_value(getattr(self, name), source, (*path, key))


def _attach_value(value: Any, source: Source, path: YamlPath) -> None:
    if isinstance(value, Node):
        value.attach(source, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _attach_value(item, source, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            _attach_value(item, source, (*path, key))


def walk_nodes(node: Node) -> Iterator[Node]:
    """Every node below (and including) `node`, depth first."""
    yield node
    for name in type(node).model_fields:
        stack: list[Any] = [getattr(node, name)]
        while stack:
            value = stack.pop()
            if isinstance(value, Node):
                yield from walk_nodes(value)
            elif isinstance(value, list):
                stack.extend(reversed(value))
            elif isinstance(value, dict):
                stack.extend(reversed(list(value.values())))
