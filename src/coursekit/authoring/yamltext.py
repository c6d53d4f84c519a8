"""Text-level YAML for the round-trip editor: indentation detection, scalar rendering,
quote-aware scanners (comments, flow tokens, brackets), and the check that an edit left every
line outside its region byte-identical.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coursekit.load.yamlparse import parse_yaml
from coursekit.load.yamlsafe import LoadError, comment_start
from coursekit.records import record


class EditError(Exception):
    """An edit that cannot be made without touching what it must not touch."""


@record(frozen=True)
class Indent:
    """ruamel's three numbers: mapping indent, sequence indent, dash offset."""

    mapping: int = 2
    sequence: int = 4
    offset: int = 2


_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[^\s#'\"\-][^:#]*|'[^']*'|\"[^\"]*\"):(\s|$)")


def detect_indent(text: str) -> Indent:
    """The file's own indentation: the first nested mapping and the first block sequence."""
    lines = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    for index, line in enumerate(lines[:-1]):
        match = _KEY_LINE.match(line)
        if match is None or line.rstrip().split("#", 1)[0].rstrip()[-1:] != ":":
            continue
        parent = len(match["indent"])
        nxt = lines[index + 1]
        child = len(nxt) - len(nxt.lstrip(" "))
        body = nxt.lstrip(" ")
        if body.startswith("- ") or body == "-":
            if sequence is None and child >= parent:
                content = len(body) - len(body[1:].lstrip(" ")) if body != "-" else 2
                sequence = (child - parent, content)
        elif child > parent and mapping is None:
            mapping = child - parent
        if mapping is not None and sequence is not None:
            break
    m = mapping or 2
    if sequence is None:
        return Indent(m, m + 2 if m == 2 else m, 2 if m == 2 else 0)
    offset, content = sequence
    return Indent(m, offset + content, offset)


# Scalars ------------------------------------------------------------------------------------

_PLAIN_UNSAFE_START = set("-?:,[]{}#&*!|>'\"%@` ")


def render_scalar(value: Any, flow: bool = False, quote: str | None = None) -> str:
    """A YAML scalar that reads back as `value`: plain when that is safe, else quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if quote == '"':
        return _double(text)
    if quote == "'":
        return _single(text) if "\n" not in text else _double(text)
    if _plain_ok(text, flow):
        return text
    return _single(text) if "\n" not in text else _double(text)


def _single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _double(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _plain_ok(text: str, flow: bool) -> bool:
    if not text or text != text.strip() or "\n" in text or "\t" in text:
        return False
    if text[0] in _PLAIN_UNSAFE_START or ": " in text or " #" in text or text.endswith(":"):
        return False
    if flow and any(ch in text for ch in ",[]{}"):
        return False
    try:
        data, _ = parse_yaml(f"k: {text}\n", "<scalar>")
    except LoadError:
        return False
    return isinstance(data, dict) and data.get("k") == text and type(data.get("k")) is str


# Text helpers -------------------------------------------------------------------------------


def _comment_tails(lines: list[str]) -> list[str]:
    """Each line's comment with the spaces before it, as written."""
    tails: list[str] = []
    for line in lines:
        body = line.rstrip("\r\n")
        at = comment_start(body)
        if at is not None:
            code = body[:at].rstrip()
            tails.append(body[len(code) :])
    return tails


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _render_mapping(value: dict[str, Any], column: int, indent: Indent) -> list[str]:
    lines: list[str] = []
    pad = " " * column
    for key, item in value.items():
        name = render_scalar(key)
        if isinstance(item, dict):
            lines.append(f"{pad}{name}:")
            lines.extend(_render_mapping(item, column + indent.mapping, indent))
        elif isinstance(item, list) and any(isinstance(x, dict | list) for x in item):
            lines.append(f"{pad}{name}:")
            dash = column + indent.offset
            content = column + indent.sequence
            for element in item:
                if isinstance(element, dict):
                    body = _render_mapping(element, content, indent)
                    lines.append(" " * dash + "-" + " " * (content - dash - 1) + body[0][content:])
                    lines.extend(body[1:])
                else:
                    lines.append(" " * dash + "- " + _render_flow_value(element))
        elif isinstance(item, list):
            lines.append(f"{pad}{name}: {_render_flow(item)}")
        else:
            lines.append(f"{pad}{name}: {render_scalar(item)}")
    return lines


def _render_flow(items: list[Any]) -> str:
    return "[" + ", ".join(_render_flow_value(item) for item in items) + "]"


def _render_flow_value(item: Any) -> str:
    if isinstance(item, list):
        return _render_flow(item)
    if isinstance(item, dict):
        inner = ", ".join(
            f"{render_scalar(k, flow=True)}: {_render_flow_value(v)}" for k, v in item.items()
        )
        return "{" + inner + "}"
    return render_scalar(item, flow=True)


def _needs_quotes(value: Any) -> bool:
    return isinstance(value, str) and not _plain_ok(value, flow=True)


def _token_end(body: str, col: int) -> int | None:
    """End index of the one-line scalar token starting at `col`, or None."""
    if col >= len(body):
        return None
    first = body[col]
    if first in "|>":
        return None
    if first == "'":
        index = col + 1
        while index < len(body):
            if body[index] == "'":
                if body[index + 1 : index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            index += 1
        return None
    if first == '"':
        index = col + 1
        while index < len(body):
            if body[index] == "\\":
                index += 2
                continue
            if body[index] == '"':
                return index + 1
            index += 1
        return None
    if first in "[{":
        return None
    rest = body[col:]
    hash_at = comment_start(rest)
    end = col + (hash_at if hash_at is not None else len(rest))
    if _inside_flow(body, col):
        for stop in ",]}":
            at = body.find(stop, col, end)
            if at >= 0:
                end = at
    return col + len(body[col:end].rstrip())


def _inside_flow(body: str, col: int) -> bool:
    before = body[:col]
    return before.count("[") > before.count("]") or before.count("{") > before.count("}")


def _matching_bracket(lines: list[str], line: int, col: int) -> tuple[int, int] | None:
    depth = 0
    quote: str | None = None
    for j in range(line, len(lines)):
        text = lines[j]
        start = col if j == line else 0
        index = start
        while index < len(text):
            ch = text[index]
            if quote == "'":
                if ch == "'":
                    quote = None
            elif quote == '"':
                if ch == "\\":
                    index += 1
                elif ch == '"':
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "#" and index > 0 and text[index - 1] in " \t":
                break
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return j, index
            index += 1
    return None


def _plain(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def confined(old: str, new: str, a: int, b: int) -> bool:
    """True if `new` equals `old` outside old lines [a, b) (byte for byte, line endings too)."""
    before = old.splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    tail = len(before) - b
    if len(after) < a + tail:
        return False
    if after[:a] != before[:a]:
        return False
    return after[len(after) - tail :] == before[b:] if tail else True
