"""The one helper where course text becomes a path segment."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coursekit.bounds import (
    NAME_MAX,
    UnusableName,
    child,
    name_problem,
    names_in,
    paths_below,
    ref_number,
    shorten,
)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "is empty"),
        ("..", "names a folder"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("a\x00b", "NUL byte"),
        ("é" * 128, "256 bytes long"),  # characters are not bytes: 128 × 2
    ],
)
def test_name_problem_says_why(name: str, reason: str) -> None:
    problem = name_problem(name)
    assert problem is not None and reason in problem


def test_a_name_of_exactly_name_max_bytes_is_fine_and_a_long_path_is_not(tmp_path: Path) -> None:
    assert name_problem("x" * NAME_MAX) is None
    deep = tmp_path
    with pytest.raises(UnusableName, match="makes a path of"):
        for _ in range(40):
            deep = child(deep, "y" * 200)


def test_shorten_keeps_short_values_and_marks_cut_ones() -> None:
    assert shorten("abc") == "abc"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"


def test_ref_number_reads_counts_and_refuses_what_no_course_counts_to() -> None:
    assert ref_number("7") == 7
    assert ref_number("0000000000012") == 12  # leading zeros are not digits that count
    assert ref_number("9" * 9) == 999_999_999
    assert ref_number("1" + "0" * 9) is None
    assert ref_number("9" * 5000) is None  # int() itself refuses past 4,300 digits


# Names close to one another in sort order: "a", "a.b", "a/b", "a0", "ab" (".", "/", "0" follow
# one another in ASCII)
_SEGMENT = st.text(alphabet="ab./0-", min_size=1, max_size=3).filter(
    lambda name: "/" not in name and name not in (".", "..")
)
_PATHS = st.lists(st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join), max_size=40)


@given(_PATHS, st.sampled_from(["", "a", "a.b", "a/b", "b", "a0"]))
def test_names_in_a_folder_are_those_directly_in_it(paths: list[str], folder: str) -> None:
    ordered = sorted(set(paths))
    prefix = folder + "/" if folder else ""
    direct = [path[len(prefix) :] for path in ordered if path.startswith(prefix)]
    assert names_in(ordered, folder) == [name for name in direct if "/" not in name]
    below = [path for path in ordered if path.startswith(prefix)]
    assert paths_below(ordered, folder) == below


def test_names_in_steps_over_a_subfolders_paths_not_its_neighbours() -> None:
    paths = sorted(["b/x", "b/x.md", "b/x/1", "b/x/2/3", "b/x0", "b/y", "b.md", "c"])
    assert names_in(paths, "b") == ["x", "x.md", "x0", "y"]
    assert names_in(paths, "") == ["b.md", "c"]
    assert names_in(paths, "b/x") == ["1"]
