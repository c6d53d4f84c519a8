"""Go to definition: every link scheme, claim ids and symbols, to where they are declared."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lsprotocol import types

from coursekit.lsp import targets
from coursekit.lsp.positions import span
from coursekit.lsp.state import CourseState


def definition(
    state: CourseState, text: str, offset: int, rel: str, uris: Mapping[Path, str]
) -> types.Location | None:
    """The declaration's place; `uris` spells an open document as its editor did."""
    looked = targets.look_up(state, text, offset, rel)
    if looked is None or looked[1].location is None:
        return None
    where = looked[1].location
    path = state.absolute(where.path)
    line, start, end_line, end = span(state.text(where.path), where.line, where.column)
    return types.Location(
        uri=uris.get(path, path.as_uri()),
        range=types.Range(types.Position(line, start), types.Position(end_line, end)),
    )
