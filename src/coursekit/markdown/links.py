"""Links and tags of a Markdown text, read from its masked view (code and comments blanked)."""

from __future__ import annotations

import re

from coursekit.records import record

_BRACKET = re.compile(r"[\[\]]")
_TARGET = re.compile(r"[^)\s]+")
_TAG = re.compile(r"\[(?P<text>[^\[\]\n]+)\]\{(?P<key>[A-Za-z][\w-]*)=(?P<value>[^}\s]*)\}")


@record(frozen=True, slots=True)
class Link:
    text: str
    target: str
    offset: int  # of the target
    span: tuple[int, int]  # the whole link


@record(frozen=True, slots=True)
class Tag:
    """`[text]{key=value}`: a number tied to a claim (`{claim=rec-t50}`), for instance."""

    text: str
    key: str
    value: str
    offset: int  # of the text
    value_offset: int


def links(masked: str) -> list[Link]:
    """`[text](target ...)` outside code and comments, read in one pass.

    Brackets pair as they nest; an image (`![alt](src)`) is not a link; a link inside another
    link's text wins and the outer brackets are then text (CommonMark). The target stops at
    whitespace, so a link title (`(fig:2 "Fig. 2")`) is left out.
    """
    if "](" not in masked:
        return []
    found: list[Link] = []
    openers: list[int] = []
    no_paren_after = len(masked) + 1  # a `)` search that failed from there fails for later too
    index = 0
    while True:
        match = _BRACKET.search(masked, index)
        if match is None:
            return found
        index = match.end()
        if match.group() == "[":
            openers.append(match.start())
            continue
        if not openers:
            continue
        start = openers.pop()
        close = match.start()
        if not masked.startswith("(", close + 1) or masked[start - 1 : start] == "!":
            continue
        end = -1 if close + 2 >= no_paren_after else masked.find(")", close + 2)
        if end < 0:
            no_paren_after = min(no_paren_after, close + 2)
            continue
        target = _TARGET.match(masked, close + 2, end)
        if target is None:
            continue
        found.append(
            Link(masked[start + 1 : close], target.group(), target.start(), (start, end + 1))
        )
        openers.clear()  # links do not nest: the brackets around this one are text
        index = end + 1


def tags(masked: str) -> list[Tag]:
    if "]{" not in masked:
        return []
    return [
        Tag(m["text"], m["key"], m["value"], m.start("text"), m.start("value"))
        for m in _TAG.finditer(masked)
    ]
