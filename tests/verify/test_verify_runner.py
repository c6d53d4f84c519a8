"""The document runner: isolation, time limits, verdict shapes, fingerprints, lazy sympy."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from coursekit.verify import MathsSpec, Verdict, verify_document
from coursekit.verify.isolation import run_inline, run_isolated

SRC = str(Path(__file__).parents[2] / "src")
EQUAL = {"d_h": "d", "d_x": "d", "d_k": "d", "d_v": "d"}
W512 = {"d_h": 512, "d_x": 512, "d_k": 512, "d_v": 512}


def lesson_spec(**changes: object) -> MathsSpec:
    """The maths of "Goodbye to recurrence", as the loader would hand it over."""
    data: dict[str, object] = {
        "assume": {"positive": ["T", "d", "d_h", "d_x", "d_k", "d_v"], "integer": ["T"]},
        "formulas": {
            "recurrence": "T*(d_h**2 + d_h*d_x)",
            "grid": "T**2*d_k + T**2*d_v",
            "ratio": "grid / recurrence",
        },
        "claims": [
            {
                "id": "ratio",
                "kind": "identity",
                "lhs": "grid / recurrence",
                "rhs": "T/d",
                "where": EQUAL,
            },
            {
                "id": "crossing",
                "kind": "solve",
                "equation": "grid = recurrence",
                "for": "T",
                "where": EQUAL,
                "solutions": ["d"],
            },
            {
                "id": "crossing-512",
                "kind": "solve",
                "equation": "grid = recurrence",
                "for": "T",
                "where": W512,
                "solutions": [512],
            },
            {
                "id": "rec-t50",
                "kind": "value",
                "expr": "recurrence",
                "where": {"T": 50, **W512},
                "value": 26214400,
            },
            {
                "id": "grid-t50",
                "kind": "value",
                "expr": "grid",
                "where": {"T": 50, **W512},
                "value": 2560000,
            },
            {
                "id": "ten-times",
                "kind": "value",
                "expr": "recurrence / grid",
                "where": {"T": 50, **W512},
                "value": 10,
                "tolerance": 0.05,
            },
            {
                "id": "grid-t1000",
                "kind": "value",
                "expr": "grid",
                "where": {"T": 1000, **W512},
                "value": 1024000000,
            },
            {
                "id": "rec-t1000",
                "kind": "value",
                "expr": "recurrence",
                "where": {"T": 1000, **W512},
                "value": 524288000,
            },
            {
                "id": "ratio-t1000",
                "kind": "value",
                "expr": "ratio",
                "where": {"T": 1000, **W512},
                "value": 1.95,
                "digits": 3,
            },
            {
                "id": "order-rec",
                "kind": "order",
                "expr": "recurrence",
                "order": "T*d**2",
                "where": EQUAL,
            },
            {
                "id": "order-grid",
                "kind": "order",
                "expr": "grid",
                "order": "T**2*d",
                "where": EQUAL,
            },
            {
                "id": "cheaper",
                "kind": "inequality",
                "relation": "grid < recurrence",
                "when": "T < d",
                "where": EQUAL,
            },
        ],
        "equations": {"recurrence": r"T\,(d_h^2 + d_h d_x)", "grid": r"T^2 d_k + T^2 d_v"},
        "numbers": [
            ("rec-t50", "26,214,400"),
            ("grid-t50", "2,560,000"),
            ("ten-times", "ten"),
            ("grid-t1000", "1,024,000,000"),
            ("rec-t1000", "524,288,000"),
            ("ratio-t1000", "1.95"),
            ("crossing-512", "512"),
        ],
        "quiz": [("crossing-512", 512, 0)],
    }
    data.update(changes)
    return MathsSpec.build(**data)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def lesson_verdicts() -> list[Verdict]:
    return verify_document(lesson_spec(), timeout=10)


def test_the_lesson_passes(lesson_verdicts: list[Verdict]) -> None:
    bad = [v for v in lesson_verdicts if not v.ok]
    assert bad == []
    kinds = [v.subject for v in lesson_verdicts]
    assert kinds.count("formula") == 3 and kinds.count("claim") == 12
    assert kinds.count("equation") == 2 and kinds.count("number") == 7 and kinds.count("quiz") == 1


def test_verdict_order_and_indices(lesson_verdicts: list[Verdict]) -> None:
    order = ["formula", "claim", "equation", "number", "quiz"]
    subjects = [v.subject for v in lesson_verdicts]
    assert subjects == sorted(subjects, key=order.index)
    claims = [v for v in lesson_verdicts if v.subject == "claim"]
    assert [v.index for v in claims] == list(range(12))
    assert claims[3].key == "rec-t50" and claims[3].value == "26214400"


def test_editing_a_number_fails_on_it() -> None:
    spec = lesson_spec(numbers=[("rec-t50", "26,214,401")])
    (number,) = [v for v in verify_document(spec, timeout=10) if v.subject == "number"]
    assert number.status == "false"
    assert "26,214,401" in number.message and "26,214,400" in number.message


def test_editing_the_formula_fails_its_claims_and_equation() -> None:
    formulas = {
        "recurrence": "3*T*d_h**2",
        "grid": "T**2*d_k + T**2*d_v",
        "ratio": "grid / recurrence",
    }
    verdicts = verify_document(lesson_spec(formulas=formulas), timeout=10)
    failed = {(v.subject, v.key) for v in verdicts if v.status == "false"}
    assert ("claim", "rec-t50") in failed and ("equation", "recurrence") in failed
    assert ("claim", "ratio") in failed
    # the prose number now disagrees with the recomputed value
    assert ("number", "rec-t50") in failed


def test_editing_the_latex_fails_the_equation() -> None:
    verdicts = verify_document(
        lesson_spec(
            equations={"ratio": r"\frac{d}{T}"},
            formulas={"ratio": "T/d"},
            claims=[],
            numbers=[],
            quiz=[],
        ),
        timeout=10,
    )
    (eq,) = [v for v in verdicts if v.subject == "equation"]
    assert eq.status == "false" and "d/T" in eq.message


def test_hostile_formula_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "x"
    for target in (marker, Path("/tmp/x")):
        if target == Path("/tmp/x") and target.exists():
            continue  # cannot prove a negative about a file someone else made
        spec = MathsSpec.build(
            formulas={"evil": f"__import__('os').system('touch {target}')"},
            claims=[
                {"id": "v", "kind": "value", "expr": "evil", "value": 0},
                {
                    "id": "w",
                    "kind": "value",
                    "expr": f"__import__('os').system('touch {target}')",
                    "value": 0,
                },
            ],
            equations={"evil": "x"},
        )
        verdicts = verify_document(spec, timeout=5)
        assert [v.status for v in verdicts] == ["error", "error", "error", "skipped"]
        assert verdicts[0].offset == 0 and verdicts[0].field == "evil"
        assert not target.exists()


def test_slow_claim_times_out_within_the_limit() -> None:
    import sympy  # noqa: F401 - warm, so the measurement is of the limit, not the import

    spec = MathsSpec.build(
        claims=[
            {
                "id": "slow",
                "kind": "identity",
                "lhs": "(a+b+c+d+e+f)**30*(a-b+c-d+e-f)**30",
                "rhs": "1",
            },
            {"id": "after", "kind": "value", "expr": "2 + 2", "value": 4},
        ],
        numbers=[("slow", "1")],
    )
    t0 = time.monotonic()
    verdicts = verify_document(spec, timeout=0.2)
    elapsed = time.monotonic() - t0
    slow, after, number = verdicts
    assert slow.status == "timeout" and slow.message == "timed out after 0.2 s"
    assert after.ok  # the next job still runs, in a fresh worker
    assert number.status == "skipped"
    assert elapsed < 1.5


def test_run_isolated_survives_a_crashing_job() -> None:
    from coursekit.verify.claims import CheckResult

    def crash() -> CheckResult:
        os._exit(3)

    def fine() -> CheckResult:
        return CheckResult("ok", "fine")

    results = run_isolated([fine, crash, fine], timeout=5)
    assert [r.status for r, _ in results] == ["ok", "crashed", "ok"]
    assert "worker died: it exited with status 3" in results[1][0].message


def test_a_worker_killed_from_outside_is_crashed_not_unproven() -> None:
    """The OOM killer's SIGKILL is reported as such (and `crashed` is never kept)."""
    from coursekit.verify.claims import CheckResult

    def killed() -> CheckResult:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

    ((result, _),) = run_isolated([killed], timeout=5)
    assert (result.status, result.message) == ("crashed", "the worker died: killed by SIGKILL")


def test_sympy_raising_is_crashed_not_a_verdict() -> None:
    from coursekit.verify.claims import CheckResult
    from coursekit.verify.isolation import run_inline

    def raises() -> CheckResult:
        raise TypeError("cannot determine truth value of Relational")

    ((result, _),) = run_inline([raises], timeout=5)
    assert result.status == "crashed"
    assert "sympy raised TypeError: cannot determine truth value" in result.message


def test_run_inline_uses_an_alarm() -> None:
    from coursekit.verify.claims import CheckResult

    def spin() -> CheckResult:
        while True:
            time.sleep(0.01)

    t0 = time.monotonic()
    ((res, _),) = run_inline([spin], timeout=0.2)
    assert res.status == "timeout" and time.monotonic() - t0 < 1


def test_duplicate_and_missing_references() -> None:
    spec = MathsSpec.build(
        claims=[
            {"id": "a", "kind": "value", "expr": "1", "value": 1},
            {"id": "a", "kind": "value", "expr": "2", "value": 2},
            {"id": "o", "kind": "order", "expr": "T**2", "order": "T**2"},
        ],
        equations={"nothing": "x"},
        numbers=[("nope", "1"), ("o", "1")],
        quiz=[("nope", 1, 0)],
    )
    by = {(v.subject, v.index): v for v in verify_document(spec, timeout=5)}
    assert by[("claim", 1)].status == "error" and "duplicate" in by[("claim", 1)].message
    assert by[("equation", 0)].status == "missing"
    assert by[("number", 0)].status == "missing"
    assert by[("number", 1)].status == "error" and "no single number" in by[("number", 1)].message
    assert by[("quiz", 0)].status == "missing"


def test_bad_assumptions_skip_everything() -> None:
    spec = lesson_spec(assume={"postive": ["T"]})
    verdicts = verify_document(spec, timeout=5)
    assert verdicts[0].subject == "spec" and verdicts[0].status == "error"
    assert {v.status for v in verdicts[1:]} == {"skipped"}


def test_spec_and_verdicts_serialise(lesson_verdicts: list[Verdict]) -> None:
    spec = lesson_spec()
    assert MathsSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec
    for v in lesson_verdicts:
        assert Verdict.from_json(json.loads(json.dumps(v.to_json()))) == v
        assert pickle.loads(pickle.dumps(v)) == v


def test_fingerprint_is_content_addressed() -> None:
    a, b = lesson_spec(), lesson_spec()
    assert a.fingerprint() == b.fingerprint() and len(a.fingerprint()) == 64
    changed = lesson_spec(numbers=[("rec-t50", "26,214,401")])
    assert changed.fingerprint() != a.fingerprint()


@pytest.mark.parametrize(
    "claim",
    [
        {"id": "s", "kind": "solve", "equation": "x**2 + 1 = 0", "for": "x", "solutions": []},
        {"id": "v", "kind": "identity", "lhs": "T", "rhs": "T", "variables": []},
        {"id": "z", "kind": "shape", "expr": "T", "shape": []},
    ],
)
def test_an_empty_list_is_not_a_missing_field(claim: dict[str, object]) -> None:
    """`solutions: []` (the equation has no solutions) and no `solutions` at all (an invalid
    solve claim) are different claims: they had one fingerprint, so the verdict cached for one
    was replayed for the other (a pass replayed for a claim missing its solutions)."""
    name = next(k for k, v in claim.items() if v == [])
    given = MathsSpec.build(claims=[claim])
    missing = MathsSpec.build(claims=[{k: v for k, v in claim.items() if k != name}])
    assert given != missing
    assert given.fingerprint() != missing.fingerprint()
    for spec in (given, missing):
        assert MathsSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_importing_the_package_does_not_import_sympy() -> None:
    code = (
        "import sys, coursekit.verify as v\n"
        "assert 'sympy' not in sys.modules, 'sympy imported'\n"
        "v.parse_formula('T*d'); v.parse_latex('2Td^2'); v.check_number('1.95', '125/64')\n"
        "v.MathsSpec.build(formulas={'a': 'T'}).fingerprint()\n"
        "assert 'sympy' not in sys.modules, 'sympy imported by a pure function'\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def _claim_fields() -> Any:
    """Every field of a Claim, each None, empty, or a value of its type."""
    from dataclasses import fields

    from hypothesis import strategies as st

    from coursekit.verify.claims.model import Claim

    text = st.text(alphabet="abxT0123 +*=/()", max_size=8)
    texts = st.one_of(st.none(), st.lists(text, max_size=2).map(tuple))
    pairs = st.lists(st.tuples(text, text), max_size=2).map(tuple)
    by_name: dict[str, Any] = {}
    for f in fields(Claim):
        if f.name in ("id", "kind"):
            by_name[f.name] = text.filter(bool)
        elif f.name == "where":
            by_name[f.name] = pairs
        elif f.name in ("solutions", "variables", "shape", "axes"):
            by_name[f.name] = texts
        elif f.name == "when":
            by_name[f.name] = st.lists(text, max_size=2).map(tuple)
        elif f.name == "tolerance":
            by_name[f.name] = st.one_of(st.none(), st.floats(0, 1, allow_nan=False))
        elif f.name == "digits":
            by_name[f.name] = st.one_of(st.none(), st.integers(0, 9))
        elif f.name == "bound":
            by_name[f.name] = st.sampled_from(["theta", "big-o", ""])
        else:
            by_name[f.name] = st.one_of(st.none(), text)
    return st.fixed_dictionaries(by_name).map(lambda kw: Claim(**kw))


def test_a_claim_survives_its_json_whatever_its_fields() -> None:
    """The fingerprint is the spec's JSON: two different claims must never write the same JSON,
    or the verdict cached for one is replayed for the other. A field added with a meaningful
    empty or None value is caught here."""
    from hypothesis import given, settings

    from coursekit.verify.claims.model import Claim

    @settings(max_examples=300, deadline=None)
    @given(_claim_fields())
    def round_trip(claim: Claim) -> None:
        assert Claim.from_json(json.loads(json.dumps(claim.to_json()))) == claim

    round_trip()
