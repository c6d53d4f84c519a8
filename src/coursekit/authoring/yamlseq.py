"""Where a block or flow list sits in the text, and the lines an inserted item becomes.

The text-level half of :class:`coursekit.authoring.yamledit.YamlEditor`: given a parsed
sequence (ruamel keeps each item's line and column) and the file's lines, find an item's span,
the column its content starts at, and render a new item in the file's own indentation, so an
insertion touches only the lines it adds.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedSeq

from coursekit.authoring.yamltext import (
    EditError,
    _indent_of,
    _is_blank_or_comment,
    _matching_bracket,
    _needs_quotes,
    _newline,
    _render_flow,
    _render_mapping,
    detect_indent,
    render_scalar,
)


class SequenceText:
    """One file's text, read for the positions of the lists in it."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name

    def is_flow(self, seq: CommentedSeq, lines: list[str]) -> bool:
        if seq.fa.flow_style():
            return True
        line: int = seq.lc.line
        col: int = seq.lc.col
        return line < len(lines) and lines[line][col : col + 1] == "["

    def flow_insert(
        self, seq: CommentedSeq, lines: list[str], index: int, value: Any
    ) -> tuple[tuple[int, int], str]:
        open_line, open_col = seq.lc.line, seq.lc.col
        close = _matching_bracket(lines, open_line, open_col)
        if close is None:
            raise EditError(f"{self.name}:{open_line + 1}: cannot find the end of this list")
        close_line, close_col = close
        joined = "".join(lines)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        open_at = starts[open_line] + open_col
        close_at = starts[close_line] + close_col
        inner = joined[open_at + 1 : close_at]
        quote = '"' if '"' in inner and "'" not in inner else None
        token = render_scalar(value, flow=True, quote=quote if _needs_quotes(value) else None)
        if index >= len(seq):
            stripped = inner.rstrip()
            if stripped.strip():
                new_inner = stripped + ", " + token + inner[len(stripped) :]
            else:
                new_inner = token
        else:
            item_line, item_col = seq.lc.item(index)
            at = starts[item_line] + item_col - open_at - 1
            new_inner = inner[:at] + token + ", " + inner[at:]
        text = joined[: open_at + 1] + new_inner + joined[close_at:]
        return (open_line, close_line + 1), text

    def item_span(self, seq: CommentedSeq, lines: list[str], index: int) -> tuple[int, int, int]:
        """(first line, dash column, last content line) of block item `index`."""
        line, col = seq.lc.item(index)
        dash = lines[line].rfind("-", 0, col + 1)
        while dash > 0 and lines[line][dash - 1 : dash] not in (" ", ""):
            dash = lines[line].rfind("-", 0, dash)
        if dash < 0:
            raise EditError(f"{self.name}:{line + 1}: cannot find this item's dash")
        end = line
        for j in range(line + 1, len(lines)):
            if _is_blank_or_comment(lines[j]):
                continue
            if _indent_of(lines[j]) <= dash:
                break
            end = j
        return line, dash, end

    def content_column(self, seq: CommentedSeq, lines: list[str], dash: int) -> int:
        for index in range(len(seq)):
            column: int = seq.lc.item(index)[1]
            if column > dash:
                return column
        indent = detect_indent(self.text)
        return dash + indent.sequence - indent.offset

    def block_insert(
        self, seq: CommentedSeq, lines: list[str], index: int, value: Any
    ) -> tuple[tuple[int, int], str]:
        nl = _newline(self.text)
        if len(seq) == 0:
            raise EditError(f"{self.name}: cannot insert into an empty block list")
        separated = self.blank_separated(seq, lines)
        if index == 0:
            at, dash, _end = self.item_span(seq, lines, 0)
        else:
            _start, dash, end = self.item_span(seq, lines, index - 1)
            at = end + 1
        content = self.content_column(seq, lines, dash)
        new = self.render_item(value, dash, content, nl)
        if separated:
            new = [*new, nl] if index == 0 else [nl, *new]
        before = lines[:at]
        a = at
        if before and not before[-1].endswith(("\n", "\r")):
            before[-1] += nl
            a -= 1
        return (a, at), "".join(before + new + lines[at:])

    def blank_separated(self, seq: CommentedSeq, lines: list[str]) -> bool:
        for index in range(1, len(seq)):
            line, _col = seq.lc.item(index)
            if line > 0 and not lines[line - 1].strip():
                return True
        return False

    def render_item(self, value: Any, dash: int, content: int, nl: str) -> list[str]:
        indent = detect_indent(self.text)
        pad = " " * dash + "-" + " " * (content - dash - 1)
        if isinstance(value, dict):
            body = _render_mapping(value, content, indent)
            if not body:
                return [pad.rstrip() + " {}" + nl]
            first = pad + body[0][content:]
            return [line + nl for line in [first, *body[1:]]]
        if isinstance(value, list):
            return [pad + _render_flow(value) + nl]
        return [pad + render_scalar(value) + nl]
