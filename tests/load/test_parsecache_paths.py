"""A position's path is written as `json.dumps` writes it: the packed tables are searched for
that exact text, so the fast writer and JSON must never differ."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.load.parsecache import _path_text

PARTS = st.one_of(
    st.text(),
    st.integers(),
    st.booleans(),
    st.floats(),
    st.none(),
    st.sampled_from(["a\tb", "new\nline", '"quoted"', "back\\slash", "\x00", "é", "\u2028"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PARTS, max_size=6).map(tuple))
def test_a_path_is_written_as_json_writes_it(path: tuple[object, ...]) -> None:
    expected = json.dumps(list(path), ensure_ascii=False, separators=(",", ":"))
    assert _path_text(path) == expected  # type: ignore[arg-type]
