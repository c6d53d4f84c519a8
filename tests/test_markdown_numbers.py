"""coursekit.markdown.numbers: which numbers and orders a text shows, at the edges of the text.

The searches start at the first digit or marker and look behind it afterwards (so the regex
engine can skip to candidates); these cases pin what the look-behinds decide at the start of a
text, after punctuation, letters and backslashes, and inside longer runs.
"""

from __future__ import annotations

import pytest

from coursekit.markdown import scan
from coursekit.markdown.numbers import orders, prose_numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("26,214,400 multiplications", ["26,214,400"]),  # at offset 0: nothing before it
        ("costs 26,214,400.", ["26,214,400"]),
        ("costs 1,048,576.5 weights", ["1,048,576.5"]),
        ("a run 12,34 is neither", []),  # `,34` is no group of three, nor a number after `,`
        ("x86 and fp16 and h_1", []),  # glued to a letter or `_`
        ("10^3 and 2^{10}", ["10", "2"]),  # the base is shown; an exponent after `^` is not
        ("II.2 and Prop. 1.3", []),  # after a dot: an id
        ("a/512 or -512 or {512}", []),  # after `/`, `-`, `{`
        ("Chapter 4, Fig. 2 and step 3", []),  # named by number
        ("in 1997 and 2017 it was 3141", ["3141"]),  # years are not numbers to check
        ("1234567 and 12,345,678", ["1234567", "12,345,678"]),
        ("3.14159 and 0.125", ["3.14159", "0.125"]),
        ("512x512", []),  # a letter follows
    ],
)
def test_prose_numbers(text: str, numbers: list[str]) -> None:
    assert [found.text for found in prose_numbers(scan(text))] == numbers


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("O(T d^2) at offset 0", ["O(T d^2)"]),
        ("the grid costs $O(T^2 d)$.", ["O(T^2 d)"]),
        ("costs O (T) with a space", ["O (T)"]),
        (r"$\Theta(T)$ and $\Omega(1)$", [r"\Theta(T)", r"\Omega(1)"]),
        ("Θ(T) and Ω(T²)", ["Θ(T)", "Ω(T²)"]),
        (r"$\mathcal{O}(T)$ and $\mathcal O(d)$", [r"\mathcal{O}(T)", r"\mathcal O(d)"]),
        (r"$O\left(T^2\right)$", [r"O\left(T^2\right)"]),
        ("IO(T) and xO(1) and 2O(3)", []),  # O glued to a word or a number is no order
        (r"$\O(T)$", []),  # a macro, not O
        ("One (1) and Of (two)", []),  # words that begin with O
        ("O(T (d + 1)) nests", ["O(T (d + 1))"]),
        ("O(T and never closes", []),
    ],
)
def test_orders(text: str, found: list[str]) -> None:
    assert [order.text for order in orders(scan(text))] == found
