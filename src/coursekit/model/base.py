"""Located values: every model node remembers the file and YAML path it came from.

The loader attaches a `Source` (file path plus a table of positions) to each node after
validation; rules then ask a node for `loc()` or `loc("field", 3)` and get a `Location` that
points at the exact line and column, without reopening any file.
"""

from __future__ import annotations

import contextlib
import copy
import typing
from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from coursekit.records import record

YamlPath = tuple[str | int, ...]


@record(frozen=True, slots=True, order=True)
class Location:
    """A point in a file: path relative to the project root (POSIX), 1-based line and column."""

    path: str
    line: int = 1
    column: int = 1


@record(slots=True)
class Source:
    """Where a document came from, and where each of its values sits in the file."""

    path: str
    values: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    line_offset: int = 0  # front matter starts below the `---` line
    # (YAML path length -> the positions below each path of that length, as `below` gives
    # them): built once per length, on the first question
    _below: dict[int, dict[YamlPath, list[tuple[YamlPath, tuple[int, int], bool]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

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

    def below(self, prefix: YamlPath) -> list[tuple[YamlPath, tuple[int, int], bool]]:
        """Where every value and key at or below `prefix` starts in the file, as (YAML path,
        (line, column), whether a key), in the document's order. One pass over the tables per
        length of prefix asked, not one per question: a Book 0 of many entries is asked once
        for each."""
        size = len(prefix)
        index = self._below.get(size)
        if index is None:
            index = self._below[size] = {}
            for key, table in ((False, self.values), (True, self.keys)):
                for where, (line, column) in table.items():
                    if len(where) >= size:
                        row = (where, (line + self.line_offset, column), key)
                        index.setdefault(where[:size], []).append(row)
        return index.get(prefix, [])

    def key_at(self, path: YamlPath) -> Location:
        pos = self.position(path, key=True)
        if pos is not None:
            return Location(self.path, pos[0] + self.line_offset, pos[1])
        return self.value_at(path)


class Node(BaseModel):
    """Base of every document model: unknown keys are errors, and values know their place.

    Where a node came from (its `Source` and YAML path) is kept in the instance's
    `__pydantic_private__` slot, set by `attach`, rather than declared as pydantic private
    attributes: pydantic initialises declared private attributes for every node it builds,
    which cost about as much as validating it (~40 ms of a 100-chapter load). The slot holds
    the (source, path) pair itself, not pydantic's usual mapping of names: a one-key dict per
    node was ~15 MB of a 1,000-chapter course. Equality compares it as it compares the
    mapping; copies (`model_copy`, `copy`) and pickles carry it over, as they did when it was
    declared."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, populate_by_name=True)

    def _located(self) -> tuple[Source, YamlPath] | None:
        located: tuple[Source, YamlPath] | None = object.__getattribute__(
            self, "__pydantic_private__"
        )
        return located

    # pydantic's own copies and pickling read its private slot as a mapping of names: the
    # pair is taken out while they run (`_hidden`) and put where it belongs afterwards.
    def __copy__(self) -> Self:
        with _hidden(self) as located:
            copied = super().__copy__()
        object.__setattr__(copied, "__pydantic_private__", located)
        return copied

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        with _hidden(self) as located:
            copied = super().__deepcopy__(memo)
        object.__setattr__(copied, "__pydantic_private__", copy.deepcopy(located, memo))
        return copied

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        with _hidden(self) as located:
            copied = super().model_copy(update=update, deep=deep)
        object.__setattr__(
            copied, "__pydantic_private__", copy.deepcopy(located) if deep else located
        )
        return copied

    def __getstate__(self) -> dict[Any, Any]:
        with _hidden(self) as located:
            state = super().__getstate__()
        return {**state, "__pydantic_private__": located}

    def loc(self, *sub: str | int) -> Location:
        """Location of this node, or of a value below it (`node.loc("claims", 2, "value")`)."""
        at = self._located()
        if at is None:
            return Location("<unknown>")
        return at[0].value_at(at[1] + sub)

    def key_loc(self, key: str) -> Location:
        """Location of a key of this mapping (where an author would look for it)."""
        at = self._located()
        if at is None:
            return Location("<unknown>")
        return at[0].key_at((*at[1], key))

    def positions(self, *sub: str | int) -> list[tuple[YamlPath, tuple[int, int], bool]]:
        """Where every value and key at or below `sub` of this node is written, as (YAML path,
        (line, column), whether a key), in the order the document gives them: what moves when
        lines above them are added or removed."""
        at = self._located()
        return [] if at is None else at[0].below((*at[1], *sub))

    @property
    def source_path(self) -> str:
        at = self._located()
        return at[0].path if at else "<unknown>"

    @property
    def located_in(self) -> Source | None:
        """The `Source` `attach` recorded (None for a node built in code)."""
        at = self._located()
        return at[0] if at else None

    def attach(self, source: Source, path: YamlPath = ()) -> None:
        """Record where this node and every node below it came from."""
        object.__setattr__(self, "__pydantic_private__", (source, path))
        for name, key in _node_fields(type(self)):
            _attach_value(getattr(self, name), source, (*path, key))


@contextlib.contextmanager
def _hidden(node: Node) -> Iterator[tuple[Source, YamlPath] | None]:
    """The node's location, its private slot empty (None, as pydantic expects) meanwhile."""
    located = node._located()
    object.__setattr__(node, "__pydantic_private__", None)
    try:
        yield located
    finally:
        object.__setattr__(node, "__pydantic_private__", located)


# Per model class: the (attribute, YAML key) of each field whose value can hold a node; the
# others (strings, numbers, lists of them) are not walked.
_NODE_FIELDS: dict[type[Node], tuple[tuple[str, str], ...]] = {}


def _node_fields(kind: type[Node]) -> tuple[tuple[str, str], ...]:
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = tuple(
            (name, info.alias or name)
            for name, info in kind.model_fields.items()
            if _may_hold_node(info.annotation)
        )
        _NODE_FIELDS[kind] = fields
    return fields


def _may_hold_node(annotation: Any) -> bool:
    """Whether a value of this type can be or contain a `Node` (an unknown type: yes)."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        if issubclass(annotation, Node):
            return True
        return not issubclass(annotation, str | int | float | bool | bytes | type(None))
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return False
    if origin is typing.Annotated:
        return _may_hold_node(args[0])
    if not args:
        return annotation is not None and not isinstance(annotation, typing.TypeVar)
    return any(_may_hold_node(arg) for arg in args if arg is not Ellipsis)


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
