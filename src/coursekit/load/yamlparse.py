"""YAML text into plain data plus a table of positions, through ruamel's safe composer.

Only nodes are composed, never constructed, so no tag can run code; alias bombs and deep
nesting stop at the bounds `yamlsafe` sets, with a `LoadError` holding a line and column. The
loader imports this only when it parses a document (the cache holds every one it has seen).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.compat import _DEFAULT_YAML_VERSION
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.main import CParser  # type: ignore[attr-defined]
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver

from coursekit import codes
from coursekit.load.yamlsafe import (
    MAX_DEPTH,
    MAX_VALUES,
    LoadError,
    Span,
    count_parse,
    too_deep,
)
from coursekit.model.base import Source, YamlPath

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


def parse_yaml(text: str, path: str, line_offset: int = 0) -> tuple[Any, Source]:
    """Plain data (dicts, lists, scalars) and where each value sits, or a LoadError."""
    count_parse()
    deep = too_deep(text)
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


def text_spans(text: str) -> list[Span] | None:
    """Where the document's scalars sit: a `#` inside one is text, not a comment.

    None when the text does not compose (its comments cannot be told from its text then).
    Each node is visited once, so aliases cannot make the walk expensive.
    """
    if too_deep(text) is not None:
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
