"""The whitelisting formula parser: what it accepts, what it refuses, and where it points."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit.verify.declared import parse_formulas
from coursekit.verify.expr import FormulaError, Limits, parse_formula
from coursekit.verify.symbolic import SymbolTable, build
from coursekit.verify.tree import BinOp, Call, Name, Num


def test_lesson_formulas_parse() -> None:
    node = parse_formula("T*(d_h**2 + d_h*d_x)")
    assert isinstance(node, BinOp) and node.op == "*"
    assert parse_formula("grid / recurrence") == BinOp(
        "/", Name("grid", 0), Name("recurrence", 7), 0
    )


def test_decimals_are_exact() -> None:
    node = parse_formula("0.1")
    assert isinstance(node, Num) and node.value.numerator == 1 and node.value.denominator == 10


def test_whitelisted_calls() -> None:
    node = parse_formula("Max(T, d) + sqrt(x) + log(x, 2)")
    calls = [n for n in _walk(node) if isinstance(n, Call)]
    assert sorted(c.func for c in calls) == ["Max", "log", "sqrt"]


def _walk(node: object) -> list[object]:
    out = [node]
    for attr in ("left", "right", "operand"):
        if hasattr(node, attr):
            out += _walk(getattr(node, attr))
    for a in getattr(node, "args", ()):
        out += _walk(a)
    return out


HOSTILE = [
    ("__import__('os').system('touch /tmp/x')", "only named functions"),
    ("__import__('os')", "not allowed"),
    ("os.system", "attribute access"),
    ("().__class__.__bases__[0]", "not allowed"),
    ("lambda: 1", "lambda"),
    ("[x for x in range(10)]", "comprehensions"),
    ("(x for x in y)", "comprehensions"),
    ("{x: 1}", "dicts"),
    ("'abc'", "only numbers"),
    ("True", "only numbers"),
    ("1j", "only numbers"),
    ("x if y else z", "conditional"),
    ("a < b", "comparisons"),
    ("a and b", "boolean"),
    ("(y := 2)", "assignment"),
    ("x[0]", "subscripts"),
    ("f(x)", "not allowed"),
    ("exp", "without arguments"),
    ("sqrt(x, y)", "takes 1 argument"),
    ("sqrt(x=1)", "keyword"),
    ("2^3", "write powers as **"),
    ("7 // 2", "//"),
    ("7 % 2", "%"),
    ("_secret", "may not start with '_'"),
    ("9**9**9", "exceeds the limit"),
    ("2**100000", "exceeds the limit"),
    ("(2**100)**100", "too large"),
    ("1e400000", "exponent too large"),
    ("1/0", "division by zero"),
    ("x" * 3000, "longer than"),
    ("+".join(["x"] * 300), "nodes"),
    ("α + 1", "ASCII"),
    ("x +", "syntax error"),
    ("", "empty"),
]


@pytest.mark.parametrize(("text", "message"), HOSTILE)
def test_hostile_and_invalid_text_is_refused(text: str, message: str) -> None:
    with pytest.raises(FormulaError) as info:
        parse_formula(text)
    assert message in info.value.message


def test_refusal_creates_nothing(tmp_path: Path) -> None:
    """Parsing (and building) hostile text never runs it; checked in a clean process."""
    marker = tmp_path / "x"
    code = f"""
from coursekit.verify.expr import FormulaError
from coursekit.verify.symbolic import SymbolTable, build
for text in ["__import__('os').system('touch {marker}')",
             "open('{marker}', 'w')",
             "exec(\\"open('{marker}', 'w')\\")",
             "eval(\\"open('{marker}', 'w')\\")"]:
    try:
        build(text, SymbolTable())
    except FormulaError:
        pass
    else:
        raise SystemExit('accepted: ' + text)
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not marker.exists()


def test_error_offsets_point_at_the_construct() -> None:
    with pytest.raises(FormulaError) as info:
        parse_formula("T*(d_h**2 + os.system)")
    assert info.value.offset == len("T*(d_h**2 + ")
    with pytest.raises(FormulaError) as info:
        parse_formula("  T + foo(1)")
    assert info.value.offset == 6


def test_limits_are_configurable() -> None:
    with pytest.raises(FormulaError):
        parse_formula("x**20", limits=Limits(max_exponent=10))
    assert parse_formula("x**20", limits=Limits(max_exponent=100))


def test_formulas_reference_each_other_and_cycles_are_errors() -> None:
    trees, errors = parse_formulas(
        {
            "recurrence": "T*(d_h**2 + d_h*d_x)",
            "grid": "T**2*d_k + T**2*d_v",
            "ratio": "grid / recurrence",
            "a": "b + 1",
            "b": "2*a",
            "c": "a + T",
            "selfish": "selfish + 1",
            "broken": "x +",
            "user": "broken * 2",
        }
    )
    assert set(trees) == {"recurrence", "grid", "ratio"}
    assert "cycle" in errors["a"].message and "cycle" in errors["b"].message
    assert "cycle" in errors["selfish"].message
    assert "has an error" in errors["c"].message
    assert "syntax" in errors["broken"].message
    assert "has an error" in errors["user"].message
    assert errors["c"].offset == 0 and errors["user"].offset == 0


def test_build_substitutes_formulas_with_assumptions() -> None:
    table = SymbolTable({"positive": ["T", "d"], "integer": ["T"]})
    trees, _ = parse_formulas({"recurrence": "T*(d_h**2 + d_h*d_x)", "grid": "T**2*d_k + T**2*d_v"})
    expr = build("grid / recurrence", table, trees)
    assert str(expr) == "(T**2*d_k + T**2*d_v)/(T*(d_h**2 + d_h*d_x))"
    t = table.symbol("T")
    assert t.is_positive and t.is_integer


def test_unknown_assumption_is_an_error() -> None:
    with pytest.raises(FormulaError):
        SymbolTable({"postive": ["T"]})


def test_a_long_chain_of_formulas_does_not_exhaust_the_stack() -> None:
    """Formulas that use each other 3,000 deep (the first, alphabetically, uses the next...)."""
    n = 3000
    texts = {f"f{i:05d}": f"f{i + 1:05d} + 1" for i in range(n)}
    texts[f"f{n:05d}"] = "x"
    trees, errors = parse_formulas(texts)
    assert not errors and len(trees) == n + 1
    # ... and a cycle closed at the far end is still found, and blamed on every member
    texts[f"f{n:05d}"] = "f00000 * 2"
    trees, errors = parse_formulas(texts)
    assert not trees and len(errors) == n + 1
    assert all("cycle" in e.message for e in errors.values())
    # ... and a broken formula at the far end is blamed all the way up
    texts[f"f{n:05d}"] = "x +"
    trees, errors = parse_formulas(texts)
    assert not trees and "syntax" in errors[f"f{n:05d}"].message
    assert "f02999" in errors["f02998"].message and "has an error" in errors["f00000"].message


def test_python_syntax_warnings_do_not_leak_to_the_terminal() -> None:
    """ast.parse warns on `1if x` ("invalid decimal literal"): nothing of it may be printed."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(FormulaError):
            parse_formula("1if x")
        parse_formula("x*1")
    assert caught == []
