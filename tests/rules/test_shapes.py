"""CK823/CK824 and the shape claim, on a small course whose notation declares matrix shapes.

Each planted error is one edit of a correct lesson and must fail with both shapes named, at the
line of the formula (or claim) that holds it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coursekit.config import Config
from coursekit.load import load_course
from coursekit.options import Options
from coursekit.rules import REGISTRY
from coursekit.rules.base import Context, Finding

LESSON_PATH = "course/I/1-first/lessons/intro.md"
CHAPTER_PATH = "I/1-first/chapter.yaml"

NOTATION = """\
notation:
  - {symbol: T, meaning: tokens, assume: [positive, integer]}
  - {symbol: d_k, meaning: key width, assume: [positive, integer]}
  - {symbol: d_v, meaning: value width, assume: [positive, integer]}
  - {symbol: Q, meaning: queries, shape: [T, d_k], axes: [queries, features]}
  - {symbol: K, meaning: keys, shape: [T, d_k], axes: [keys, features]}
  - {symbol: V, meaning: values, shape: [T, d_v], axes: [keys, values]}
  - {symbol: W_o, meaning: output weights, shape: [d_v, d_k]}
  - {symbol: '\\mathrm{softmax}', meaning: normalised exponential, rowwise: true}
"""

FRONT = """\
---
title: Intro
strand: basics
reading_time: 3
formulas:
  scores: Q*K.T
  weights: softmax(scores/sqrt(d_k))
  out: weights*V
  proj: out*W_o
claims:
  - {id: out-shape, kind: shape, expr: out, shape: [T, d_v], axes: [queries, values]}
  - {id: grid-cost, kind: value, cost: scores, where: {T: 50, d_k: 64}, value: 160000}
  - {id: grid-memory, kind: value, memory: scores, where: {T: 1000}, value: 1000000}
  - {id: grid-order, kind: order, cost: out, order: T**2*d_k, where: {d_v: d_k}}
---
The scores cost [160,000]{claim=grid-cost} multiply-adds and hold [1,000,000]{claim=grid-memory} entries.
"""


def write(course: Path, front: str = FRONT, notation: str = NOTATION) -> None:
    chapter = course / CHAPTER_PATH
    text = chapter.read_text(encoding="utf-8")
    chapter.write_text(text.replace("items:", notation + "items:"), encoding="utf-8")
    (course.parent / LESSON_PATH).write_text(front, encoding="utf-8")


def findings(course: Path, code: str) -> list[Finding]:
    loaded = load_course(course, course.parent)
    ctx = Context(course=loaded.course, config=Config(), options=Options())
    check = REGISTRY[code].check
    assert check is not None
    return list(check(ctx))


def line_in(path: Path, needle: str) -> int:
    text = path.read_text(encoding="utf-8")
    return text[: text.index(needle)].count("\n") + 1


def test_the_rules_are_registered_with_docs() -> None:
    for code, name in (("CK823", "shape-mismatch"), ("CK824", "shape-notation")):
        rule = REGISTRY[code]
        assert rule.name == name and rule.family == "formulas"
        assert "Fails:" in rule.doc and "Passes:" in rule.doc


@pytest.mark.parametrize("code", ["CK801", "CK804", "CK805", "CK807", "CK808", "CK823", "CK824"])
def test_the_correct_lesson_passes(tiny_course: Path, code: str) -> None:
    write(tiny_course)
    assert findings(tiny_course, code) == []


PLANTED = [
    pytest.param(
        ("scores: Q*K.T", "scores: Q*K"),
        "scores: Q*K",
        ["Q is T×d_k", "K is T×d_k", "needs K transposed"],
        id="missing-transpose",
    ),
    pytest.param(
        ("proj: out*W_o", "proj: out*W_o.T"),
        "proj: out*W_o.T",
        ["out is T×d_v", "W_o.T is d_k×d_v", "columns of out (d_v)", "rows of W_o.T (d_k)"],
        id="dk-dv-swapped",
    ),
    pytest.param(
        ("scores: Q*K.T", "scores: K*Q.T"),
        "out: weights*V",
        ["normalises each row over queries", "the rows of V are keys", "wrong axis"],
        id="softmax-wrong-axis",
    ),
]


@pytest.mark.parametrize(("change", "needle", "named"), PLANTED)
def test_planted_shape_errors_fail_with_the_shapes_named(
    tiny_course: Path, change: tuple[str, str], needle: str, named: list[str]
) -> None:
    write(tiny_course, FRONT.replace(*change))
    found = findings(tiny_course, "CK823")
    assert found, "expected CK823"
    (first,) = found
    assert first.location.line == line_in(tiny_course.parent / LESSON_PATH, needle)
    for part in named:
        assert part in first.message, f"{part!r} not in {first.message!r}"


def test_swapped_widths_in_a_product() -> None:
    """d_k where d_v belongs: Q times the transposed values conforms in no order that fits."""
    from coursekit.verify import parse_formula
    from coursekit.verify.claims import Context as MathsContext
    from coursekit.verify.shapes import ShapeError, infer

    ctx = MathsContext(
        shapes={"Q": (["T", "d_k"], None), "V": (["T", "d_v"], None)}, rowwise=["softmax"]
    )
    with pytest.raises(ShapeError) as caught:
        infer(parse_formula("softmax(Q*V.T)"), ctx.shapes)
    assert "Q is T×d_k, V.T is d_v×T" in caught.value.message
    assert "columns of Q (d_k)" in caught.value.message


def test_a_wrong_claimed_shape_is_a_false_claim_naming_both(tiny_course: Path) -> None:
    write(tiny_course, FRONT.replace("shape: [T, d_v]", "shape: [T, d_k]"))
    (found,) = findings(tiny_course, "CK804")
    assert "shape claim 'out-shape' is false" in found.message
    assert "T×d_v" in found.message and "T×d_k" in found.message
    assert found.location.line == line_in(tiny_course.parent / LESSON_PATH, "id: out-shape")
    assert findings(tiny_course, "CK823") == []


def test_a_wrong_count_is_a_false_value_claim(tiny_course: Path) -> None:
    write(tiny_course, FRONT.replace("value: 160000", "value: 160001"))
    (found,) = findings(tiny_course, "CK804")
    assert "multiply-adds of scores" in found.message and "160,000" in found.message
    assert findings(tiny_course, "CK808") == []  # the prose shows the computed count


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("shape: [T, d_k], axes: [queries", "shape: [T, d_k, 2], axes: [queries", "at most two"),
        ("shape: [T, d_v], axes: [keys, values]", "shape: [T, d_v], axes: [keys]", "axes names"),
        ("{symbol: Q, meaning: queries,", "{symbol: 'Q + 1', meaning: queries,", "not one name"),
        ("'\\mathrm{softmax}'", "'\\mathrm{argmax}'", "formulas cannot call it"),
    ],
)
def test_notation_that_cannot_apply(tiny_course: Path, old: str, new: str, says: str) -> None:
    write(tiny_course, notation=NOTATION.replace(old, new))
    (found,) = findings(tiny_course, "CK824")
    assert says in found.message
    assert found.location.path.endswith("chapter.yaml")
    assert found.location.line == line_in(tiny_course / CHAPTER_PATH, new)
