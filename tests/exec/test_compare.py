"""compare(): exact for ints and strings, tolerances for floats and arrays, clear messages."""

from __future__ import annotations

import math

import numpy as np

from coursekit.exec import compare


def test_exact_int_mismatch_shows_both_values() -> None:
    result = compare(26214400, 26214401, rtol=0.1, atol=10)  # tolerances never apply to ints
    assert not result.ok
    assert result.message == "expected 26214400, got 26214401"
    assert compare(26214400, np.int64(26214400))


def test_integer_solution_wants_an_integer() -> None:
    result = compare(512, 512.0)
    assert not result.ok and "expected an integer 512, got 512.0" in result.message
    assert not compare(1, True).ok


def test_strings_and_bools_are_exact() -> None:
    assert compare("grid", "grid")
    assert compare("grid", "Grid").message == "expected 'grid', got 'Grid'"
    assert compare(True, np.bool_(True))


def test_float_within_tolerance() -> None:
    assert compare(0.5, 0.5 + 1e-10, rtol=1e-9)
    assert compare(0.0, 1e-13, atol=1e-12)
    assert compare(2.0, 2)  # an int meets a float solution
    assert compare(math.nan, float("nan"))


def test_float_over_tolerance() -> None:
    result = compare(0.5, 0.5001, rtol=1e-6)
    assert not result.ok
    assert result.message.startswith("expected 0.5, got 0.5001 (abs error 0.0001 > atol 0")
    assert not compare(1.0, math.nan).ok


def test_array_shape_mismatch_comes_first() -> None:
    result = compare([[1.0, 0.0], [0.0, 1.0]], np.ones(3))
    assert not result.ok
    assert result.message == "shape mismatch: expected shape (2, 2), got shape (3,)"


def test_array_first_differing_index_and_max_error() -> None:
    want = np.zeros((3, 4))
    got = want.copy()
    got[1, 2] = 0.5
    got[2, 3] = 2.0
    result = compare(want.tolist(), got, rtol=0, atol=1e-9)
    assert not result.ok
    assert "2 of 12 elements differ" in result.message
    assert "max abs error 2" in result.message
    assert "first at index (1, 2): expected 0.0, got 0.5" in result.message


def test_array_within_tolerance_and_yaml_whole_numbers() -> None:
    assert compare([[1, 0], [0, 1]], np.eye(2))  # YAML writes 1.0 as 1
    assert compare([0.1, 0.2], np.array([0.1, 0.2]) + 1e-12, rtol=1e-9)
    assert compare([1, 2, 3], (1, 2, 3))
    assert not compare([1, 2, 3], np.array([1, 2, 4])).ok


def test_array_dtype_kind_checked() -> None:
    result = compare([1.0, 2.0], np.array(["a", "b"]))
    assert not result.ok and "dtype mismatch" in result.message
    assert not compare([True, False], np.array([1, 0])).ok


def test_mappings_and_sequences() -> None:
    assert compare({"T": 50, "ratio": 0.1}, {"T": 50, "ratio": 0.1})
    result = compare({"T": 50, "ratio": 0.1}, {"T": 51, "ratio": 0.1})
    assert result.message == "at ['T']: expected 50, got 51"
    assert "missing 'ratio'" in compare({"T": 50, "ratio": 0.1}, {"T": 50}).message
    assert compare([512, "grid"], (512, "grid"))
    assert compare([512, "grid"], [512, "chain"]).message == "at [1]: expected 'grid', got 'chain'"
    assert "expected 2 items, got 1" in compare([1, "a"], [1]).message


def test_comparison_is_truthy_only_when_ok() -> None:
    assert bool(compare(1, 1)) and not bool(compare(1, 2))


def test_where_points_into_the_published_value() -> None:
    assert compare({"T": 50, "rows": [1.0, 2.0]}, {"T": 50, "rows": [1.0, 2.5]}).where == (
        "rows",
        1,
    )
    assert compare([[1, 2], [3, 4]], np.array([[1, 2], [3, 5]])).where == (1, 1)
    assert compare({"a": 1}, {"a": 2}).where == ("a",)
    assert compare(1, 1).where == ()
