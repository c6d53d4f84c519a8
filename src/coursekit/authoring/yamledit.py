"""Round-trip YAML edits that leave every untouched line byte-identical.

Each edit (append to a list, insert after an item, replace an item, set a scalar) is made twice:
once with ruamel.yaml's round trip (indentation detected from the file, quotes preserved, lines
never re-wrapped) and once as a plain text insertion or replacement located from the parsed
positions. The region an edit may touch is computed first, from the text; ruamel's output is
kept only if every line outside that region is byte-identical to the original *and* the result
parses to exactly the expected data; otherwise the text-level edit is used, under the same two
checks. If neither passes, the edit fails with `EditError` and nothing is written.

The text-level helpers (indentation, scalars, quote-aware scanners, `confined`) live in
`yamltext`, where lists sit in the text and how a new item is rendered in `yamlseq`; `Indent`, `detect_indent`, `render_scalar` and `confined` stay importable here.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

from coursekit.authoring.yamlseq import SequenceText
from coursekit.authoring.yamltext import (
    EditError,
    Indent,
    _comment_tails,
    _inside_flow,
    _newline,
    _plain,
    _token_end,
    confined,
    detect_indent,
    render_scalar,
)
from coursekit.load.yamlparse import parse_yaml
from coursekit.load.yamlsafe import LoadError, comment_start
from coursekit.records import record

__all__ = [
    "EditError",
    "Indent",
    "YamlEditor",
    "confined",
    "detect_indent",
    "render_scalar",
]

Key = str | int
Path_ = tuple[Key, ...]


# The editor ---------------------------------------------------------------------------------


@record
class _Plan:
    region: tuple[int, int]  # old lines [a, b) that may change
    text: str  # the text-level result
    ruamel: Callable[[Any], None] | None  # the same edit on the round-trip tree
    expected: Any  # the plain data the result must parse to


class YamlEditor:
    """Edits one YAML document's text; `text` holds the result so far."""

    def __init__(self, text: str, name: str = "<yaml>") -> None:
        self.text = text
        self.name = name
        self.fallbacks = 0  # edits made at text level because ruamel's output was not exact
        self._data()  # refuse a document that does not parse

    # Public operations ---------------------------------------------------------------------

    def append(self, path: Path_, value: Any) -> None:
        """Append `value` to the list at `path` (a missing top-level list is created)."""
        yaml, tree = self._tree()
        parent, key = self._parent(tree, path)
        if isinstance(parent, CommentedMap) and key not in parent and len(path) == 1:
            self._apply(self._plan_new_key(tree, str(key), value), yaml, tree)
            return
        seq = parent[key]
        if not isinstance(seq, CommentedSeq):
            raise EditError(f"{self.name}: '{_dotted(path)}' is not a list")
        self._apply(self._plan_insert(tree, path, seq, len(seq), value), yaml, tree)

    def insert(self, path: Path_, index: int, value: Any) -> None:
        """Insert `value` into the list at `path` so that it becomes item `index`."""
        yaml, tree = self._tree()
        seq = self._node(tree, path)
        if not isinstance(seq, CommentedSeq):
            raise EditError(f"{self.name}: '{_dotted(path)}' is not a list")
        plan = self._plan_insert(tree, path, seq, max(0, min(index, len(seq))), value)
        self._apply(plan, yaml, tree)

    def replace_item(self, path: Path_, index: int, value: Any) -> None:
        """Replace item `index` of the block list at `path` (refused if it holds a comment)."""
        yaml, tree = self._tree()
        seq = self._node(tree, path)
        if not isinstance(seq, CommentedSeq) or not 0 <= index < len(seq):
            raise EditError(f"{self.name}: no item {index} in '{_dotted(path)}'")
        self._apply(self._plan_replace(tree, path, seq, index, value), yaml, tree)

    def set_scalar(self, path: Path_, value: Any) -> None:
        """Set the scalar at `path` to `value`, keeping its quoting style."""
        yaml, tree = self._tree()
        parent, key = self._parent(tree, path)
        current = parent[key]
        if isinstance(current, CommentedMap | CommentedSeq):
            raise EditError(f"{self.name}: '{_dotted(path)}' is not a scalar")
        if _plain(current) == value and type(_plain(current)) is type(value):
            return
        self._apply(self._plan_set(tree, path, parent, key, value), yaml, tree)

    # Parsing -------------------------------------------------------------------------------

    @property
    def _lists(self) -> SequenceText:
        return SequenceText(self.text, self.name)

    def _yaml(self) -> YAML:
        indent = detect_indent(self.text)
        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True
        yaml.width = 1_000_000
        yaml.indent(mapping=indent.mapping, sequence=indent.sequence, offset=indent.offset)
        return yaml

    def _tree(self) -> tuple[YAML, Any]:
        """The round-trip tree of the text, and the YAML that read it (and writes the edit)."""
        yaml = self._yaml()
        try:
            return yaml, yaml.load(self.text)
        except (YAMLError, ValueError) as exc:
            raise EditError(f"{self.name}: does not parse as YAML: {exc}") from None

    def _data(self, text: str | None = None) -> Any:
        try:
            data, _ = parse_yaml(self.text if text is None else text, self.name)
        except LoadError as exc:
            raise EditError(f"{self.name}:{exc.line}:{exc.column}: {exc.message}") from None
        return data

    def _node(self, tree: Any, path: Path_) -> Any:
        node = tree
        for part in path:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                raise EditError(f"{self.name}: no '{_dotted(path)}'") from None
        return node

    def _parent(self, tree: Any, path: Path_) -> tuple[Any, Key]:
        if not path:
            raise EditError(f"{self.name}: an edit needs a path")
        parent = self._node(tree, path[:-1])
        key = path[-1]
        if isinstance(parent, CommentedMap):
            if not isinstance(key, str):
                raise EditError(f"{self.name}: '{_dotted(path)}' is not a key")
            return parent, key
        if isinstance(parent, CommentedSeq) and isinstance(key, int) and 0 <= key < len(parent):
            return parent, key
        raise EditError(f"{self.name}: no '{_dotted(path)}'")

    def _expected(self, path: Path_, change: Callable[[Any, Key], None]) -> Any:
        data = copy.deepcopy(self._data())
        node = data
        for part in path[:-1]:
            node = node[part]
        change(node, path[-1])
        return data

    # Applying ------------------------------------------------------------------------------

    def _apply(self, plan: _Plan, yaml: YAML, tree: Any) -> None:
        """Make the edit: ruamel's output when exact, else the plan's text. The plan is made,
        so the edit goes into the tree it was planned on rather than into a second reading."""
        if plan.ruamel is not None:
            candidate = self._ruamel_result(plan.ruamel, yaml, tree)
            if candidate is not None and self._acceptable(candidate, plan):
                self.text = candidate
                return
        if self._acceptable(plan.text, plan):
            self.fallbacks += 1
            self.text = plan.text
            return
        raise EditError(f"{self.name}: the edit would change lines it must not touch")

    @staticmethod
    def _ruamel_result(edit: Callable[[Any], None], yaml: YAML, tree: Any) -> str | None:
        try:
            edit(tree)
            out = io.StringIO()
            yaml.dump(tree, out)
        except Exception:  # ruamel's failure is never ours to report: the text path follows
            return None
        return out.getvalue()

    def _acceptable(self, candidate: str, plan: _Plan) -> bool:
        if not confined(self.text, candidate, *plan.region):
            return False
        a, b = plan.region
        old_lines = self.text.splitlines(keepends=True)
        new_lines = candidate.splitlines(keepends=True)
        inside = new_lines[a : len(new_lines) - (len(old_lines) - b)]
        if (
            _comment_tails(old_lines[a:b])
            != _comment_tails(inside)[: len(_comment_tails(old_lines[a:b]))]
        ):
            return False  # a comment in the edited lines moved or changed its spacing
        try:
            return bool(self._data(candidate) == plan.expected)
        except EditError:
            return False

    # Plans ---------------------------------------------------------------------------------

    def _plan_new_key(self, tree: Any, key: str, value: Any) -> _Plan:
        lines = self.text.splitlines(keepends=True)
        nl = _newline(self.text)
        prefix = "" if not lines or lines[-1].endswith(("\n", "\r")) else nl
        a = len(lines) - (1 if prefix else 0)
        line = f"{render_scalar(key)}: [{render_scalar(value, flow=True)}]{nl}"
        text = self.text + prefix + line

        def edit(root: Any) -> None:
            seq = CommentedSeq([value])
            seq.fa.set_flow_style()
            root[key] = seq

        def change(node: Any, k: Key) -> None:
            node[k] = [value]

        return _Plan((a, len(lines)), text, edit, self._expected((key,), change))

    def _plan_insert(
        self, tree: Any, path: Path_, seq: CommentedSeq, index: int, value: Any
    ) -> _Plan:
        lines = self.text.splitlines(keepends=True)

        def change(node: Any, key: Key) -> None:
            node[key].insert(index, value)

        expected = self._expected(path, change)
        flow = self._lists.is_flow(seq, lines)

        def edit(root: Any) -> None:
            target = self._node(root, path)
            if flow:
                target.fa.set_flow_style()
            target.insert(index, value)

        if flow:
            region, text = self._lists.flow_insert(seq, lines, index, value)
        else:
            region, text = self._lists.block_insert(seq, lines, index, value)
        return _Plan(region, text, edit, expected)

    def _plan_replace(
        self, tree: Any, path: Path_, seq: CommentedSeq, index: int, value: Any
    ) -> _Plan:
        lines = self.text.splitlines(keepends=True)
        if self._lists.is_flow(seq, lines):
            raise EditError(f"{self.name}: '{_dotted(path)}' is a flow list; edit it by hand")
        start, dash, end = self._lists.item_span(seq, lines, index)
        for line in lines[start : end + 1]:
            if comment_start(line.rstrip("\r\n")) is not None:
                raise EditError(
                    f"{self.name}:{start + 1}: the item holds a comment that replacing it would lose"
                )
        content = self._lists.content_column(seq, lines, dash)
        nl = _newline(self.text)
        new = self._lists.render_item(value, dash, content, nl)
        text = "".join(lines[:start] + new + lines[end + 1 :])

        def change(node: Any, key: Key) -> None:
            node[key][index] = value

        def edit(root: Any) -> None:
            self._node(root, path)[index] = value

        return _Plan((start, end + 1), text, edit, self._expected(path, change))

    def _plan_set(self, tree: Any, path: Path_, parent: Any, key: Key, value: Any) -> _Plan:
        lines = self.text.splitlines(keepends=True)
        if isinstance(parent, CommentedMap):
            line, col = parent.lc.value(key)
        else:
            line, col = parent.lc.item(key)
        if line >= len(lines):
            raise EditError(f"{self.name}: cannot locate '{_dotted(path)}'")
        raw = lines[line]
        body = raw.rstrip("\r\n")
        ending = raw[len(body) :]
        end = _token_end(body, col)
        if end is None:
            raise EditError(f"{self.name}:{line + 1}: '{_dotted(path)}' is not a one-line scalar")
        quote = body[col] if body[col : col + 1] in ("'", '"') else None
        flow = _inside_flow(body, col)
        token = render_scalar(value, flow=flow, quote=quote if isinstance(value, str) else None)
        text = "".join(
            [*lines[:line], body[:col] + token + body[end:] + ending, *lines[line + 1 :]]
        )
        current = parent[key]

        def edit(root: Any) -> None:
            target, k = self._parent(root, path)
            new: Any = value
            if isinstance(value, str) and isinstance(current, SingleQuotedScalarString):
                new = SingleQuotedScalarString(value)
            elif isinstance(value, str) and isinstance(current, DoubleQuotedScalarString):
                new = DoubleQuotedScalarString(value)
            target[k] = new

        def change(node: Any, k: Key) -> None:
            node[k] = value

        return _Plan((line, line + 1), text, edit, self._expected(path, change))


def _dotted(path: Path_) -> str:
    return ".".join(str(part) for part in path)
