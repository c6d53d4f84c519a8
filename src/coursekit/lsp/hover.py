"""Hover: what the thing under the cursor means (a symbol, a link's target, a claim, a code)."""

from __future__ import annotations

from lsprotocol import types

from coursekit.lsp import targets
from coursekit.lsp.positions import position_of
from coursekit.lsp.state import CourseState


def hover(state: CourseState, text: str, offset: int, rel: str) -> types.Hover | None:
    looked = targets.look_up(state, text, offset, rel)
    if looked is None:
        return None
    found, target = looked
    start, end = position_of(text, found.start), position_of(text, found.end)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=target.markdown),
        range=types.Range(types.Position(*start), types.Position(*end)),
    )
