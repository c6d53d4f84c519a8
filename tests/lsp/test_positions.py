"""coursekit's places (1-based, characters) and the editor's (0-based, UTF-16 units)."""

from __future__ import annotations

from coursekit.lsp.positions import char_column, offset_at, position_of, span, utf16_column


def test_a_range_covers_the_token_at_the_place() -> None:
    text = "title: x\nsee [it](apparatus:0.LA.99) now\n"
    assert span(text, 2, 10) == (1, 9, 1, 26)


def test_columns_after_an_astral_character_count_two_units() -> None:
    line = "a 𝑥 b"
    assert utf16_column(line, 4) == 5
    assert char_column(line, 5) == 4
    assert span(line, 1, 5) == (0, 5, 0, 6)


def test_a_place_past_the_end_or_in_a_missing_file_is_an_empty_range() -> None:
    assert span("one line", 7, 3) == (6, 2, 6, 2)
    assert span(None, 1, 1) == (0, 0, 0, 0)


def test_offsets_and_positions_round_trip() -> None:
    text = "ab\n× 𝑥 c\n"
    for offset in range(len(text) + 1):
        line, unit = position_of(text, offset)
        assert offset_at(text, line, unit) == offset
