"""Kept job results (coursekit.verify.parts): an edit re-runs the jobs it changed, and those
alone; a corrected value is judged without sympy; every verdict is the one a fresh run gives."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.verify import Claim, Context, MathsSpec, Verdict, check_claim, verify_documents
from coursekit.verify.claims.value import judge_known
from coursekit.verify.isolation import run_inline
from coursekit.verify.parts import Parts

SRC = str(Path(__file__).parents[2] / "src")
RUN_INLINE = "coursekit.verify.runner.run_inline"  # where the runner finds it
ASSUME = {"positive": ["T", "d"], "integer": ["T"]}
FORMULAS = {"grid": "T**2*d", "recurrence": "T*d**2", "ratio": "grid / recurrence"}
CLAIMS: list[dict[str, Any]] = [
    {"id": "grid-4", "kind": "value", "expr": "grid", "where": {"T": 4, "d": 8}, "value": 128},
    {"id": "rec-4", "kind": "value", "expr": "recurrence", "where": {"T": 4, "d": 8}, "value": 256},
    {
        "id": "ratio-3",
        "kind": "value",
        "expr": "ratio",
        "where": {"T": 3, "d": 7},
        "value": 0.43,
        "digits": 2,
    },
    {"id": "ratio", "kind": "identity", "lhs": "grid / recurrence", "rhs": "T/d"},
    {
        "id": "cross",
        "kind": "solve",
        "equation": "grid = recurrence",
        "for": "T",
        "solutions": ["d"],
    },
]
EQUATIONS = [("grid", "T^2 d"), ("recurrence", r"T\,d^2")]


def spec(claims: Sequence[dict[str, Any]] = CLAIMS, **changes: Any) -> MathsSpec:
    data: dict[str, Any] = {
        "assume": ASSUME,
        "formulas": FORMULAS,
        "claims": claims,
        "equations": EQUATIONS,
        "numbers": [("grid-4", "128"), ("rec-4", "256")],
        "quiz": [("grid-4", "128", "0")],
    }
    data.update(changes)
    return MathsSpec.build(**data)


def edited(index: int, **fields: Any) -> list[dict[str, Any]]:
    claims = [dict(c) for c in CLAIMS]
    claims[index].update(fields)
    return claims


@pytest.fixture
def jobs_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sympy jobs each run of the (in-process) runner was given."""
    counts: list[int] = []

    def counting(jobs: Sequence[Callable[[], Any]], timeout: float) -> Any:
        counts.append(len(jobs))
        return run_inline(jobs, timeout)

    monkeypatch.setattr(RUN_INLINE, counting)
    return counts


def fresh(s: MathsSpec) -> list[Verdict]:
    (verdicts,) = verify_documents([s], 5.0, isolate=False)
    return verdicts


def remembering(s: MathsSpec, parts: Parts) -> list[Verdict]:
    (verdicts,) = verify_documents([s], 5.0, isolate=False, parts=[parts])
    return verdicts


@pytest.fixture
def kept(jobs_run: list[int]) -> Parts:
    """What a first run keeps of the spec's jobs (every one of them ran)."""
    parts = Parts.empty()
    assert remembering(spec(), parts) == fresh(spec())
    assert jobs_run[0] == len(CLAIMS) + len(EQUATIONS)
    jobs_run.clear()
    return parts


def test_nothing_changed_runs_no_job(kept: Parts, jobs_run: list[int]) -> None:
    assert remembering(spec(), kept) == fresh(spec())
    assert jobs_run[0] == len(CLAIMS) + len(EQUATIONS)  # the fresh run's, and none before it
    assert len(jobs_run) == 1


@pytest.mark.parametrize(
    ("changed", "runs"),
    [
        # A stated value alone: judged against the number kept, by no job at all.
        (spec(edited(0, value=129)), 0),
        (spec(edited(0, value="256/2")), 0),
        (spec(edited(2, value=0.44)), 0),
        (spec(edited(2, digits=3, value=0.429)), 0),
        (spec(edited(1, value=250, tolerance=0.05)), 0),
        (spec(edited(1, value=0, tolerance=0.05)), 0),  # refused as sympy refuses it
        (spec(edited(0, id="grid-four")), 0),  # renamed: the numbers now cite nothing
        # What a value is compared with is not a plain number: sympy's to say.
        (spec(edited(0, value="recurrence / 2")), 1),
        # What the number is worked out from: that claim again, and nothing else.
        (spec(edited(0, where={"T": 5, "d": 8})), 1),
        (spec(edited(0, expr="grid / 2")), 1),
        (spec(edited(0, expr="recurrence")), 0),  # what rec-4 came to: the same number
        (spec(edited(3, rhs="T/d + 1")), 1),
        (spec(edited(4, solutions=["d", "2*d"])), 1),
        (spec(equations=[("grid", "T^2 d + 1"), EQUATIONS[1]]), 1),
        (spec(edited(0, kind="identity", lhs="grid", rhs="T**2*d")), 1),
        # What every job reads: all of them again.
        (spec(formulas={**FORMULAS, "grid": "T**2*d + 1"}), len(CLAIMS) + len(EQUATIONS)),
        (spec(assume={"positive": ["T", "d"]}), len(CLAIMS) + len(EQUATIONS)),
        (spec(shapes={"Q": (["T", "d"], None)}), len(CLAIMS) + len(EQUATIONS)),
    ],
)
def test_an_edit_re_runs_what_it_changed_and_gives_a_fresh_runs_verdicts(
    kept: Parts, jobs_run: list[int], changed: MathsSpec, runs: int
) -> None:
    assert remembering(changed, kept) == fresh(changed)
    assert jobs_run[0] == runs if runs else len(jobs_run) == 1  # the fresh run's only


def test_a_corrected_value_changes_the_verdict(kept: Parts) -> None:
    wrong = remembering(spec(edited(0, value=129)), kept)
    claim = next(v for v in wrong if v.subject == "claim" and v.key == "grid-4")
    assert claim.status == "false" and "the claim says 129" in claim.message
    right = remembering(spec(), kept)
    assert next(v for v in right if v.key == "grid-4" and v.subject == "claim").ok


def test_a_number_stays_known_through_a_verdict_that_shows_none(
    kept: Parts, jobs_run: list[int]
) -> None:
    """A value refused (a tolerance around 0) computes no number to show, and the number its
    expression came to is still known for the next correction."""
    refused = remembering(spec(edited(1, value=0, tolerance=0.05)), kept)
    assert next(v for v in refused if v.key == "rec-4" and v.subject == "claim").status == "error"
    corrected = spec(edited(1, value=255, tolerance=0.05))
    assert remembering(corrected, kept) == fresh(corrected)
    assert jobs_run == [len(CLAIMS) + len(EQUATIONS)]  # the fresh run's: none before it


def test_what_is_kept_is_the_specs_jobs_alone(kept: Parts) -> None:
    """An entry does not outgrow its document: a job gone is a result gone."""
    remembering(spec(CLAIMS[:2], equations=[]), kept)
    assert len(kept.results) == 2 and len(kept.values) == 2


def test_a_result_that_depended_on_the_clock_is_not_kept(kept: Parts) -> None:
    def timing_out(jobs: Sequence[Callable[[], Any]], timeout: float) -> Any:
        return [(dataclasses.replace(r, status="timeout"), s) for r, s in run_inline(jobs, timeout)]

    changed = spec(edited(0, where={"T": 5, "d": 8}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RUN_INLINE, timing_out)
        remembering(changed, kept)
    assert len(kept.results) == len(CLAIMS) + len(EQUATIONS) - 1
    assert remembering(changed, kept) == fresh(changed)  # and runs again, then kept


@pytest.mark.parametrize(
    "data",
    [None, [], {"results": []}, {"results": {}, "values": []}, {"results": {"k": {"s": 1}}}],
)
def test_an_entry_of_another_shape_keeps_nothing(data: object) -> None:
    parts = Parts.from_json(data)
    assert parts.results == {} and parts.values == {}


@pytest.mark.parametrize("number", ["1/0", "0.5", "x", "", "1/", "١٢٣"])
def test_a_kept_number_that_no_run_writes_is_no_number(number: str) -> None:
    """A damaged entry: the claim goes to sympy, and nothing raises."""
    parts = Parts.from_json({"results": {}, "values": {"k": number}})
    assert parts.values == {}


def test_a_kept_result_of_another_shape_is_run_again(kept: Parts, jobs_run: list[int]) -> None:
    results = {key: {"status": "ok", "message": 3} for key in kept.results}
    kept = Parts.from_json({"results": results, "values": {}})
    assert remembering(spec(), kept) == fresh(spec())
    assert jobs_run[0] == len(CLAIMS) + len(EQUATIONS)


def test_a_corrected_value_is_judged_without_importing_sympy(kept: Parts, tmp_path: Path) -> None:
    """In a fresh process, as `check` runs after an author fixes a quoted number."""
    given_spec = spec(edited(0, value=129))
    (tmp_path / "spec.json").write_text(json.dumps(given_spec.to_json()), "utf-8")
    (tmp_path / "parts.json").write_text(json.dumps(kept.to_json()), "utf-8")
    script = (
        "import json, sys\n"
        "from coursekit.verify import MathsSpec, verify_documents\n"
        "from coursekit.verify.parts import Parts\n"
        "spec = MathsSpec.from_json(json.load(open('spec.json')))\n"
        "parts = Parts.from_json(json.load(open('parts.json')))\n"
        "(verdicts,) = verify_documents([spec], 5.0, parts=[parts])\n"
        "print(json.dumps([v.to_json() for v in verdicts]))\n"
        "print('sympy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC},
        check=True,
    ).stdout.splitlines()
    assert out[1] == "False"
    assert [Verdict.from_json(v) for v in json.loads(out[0])] == fresh(given_spec)


# judge_known against check_claim: the same verdict, whatever is stated -----------------------

CONTEXT = Context(ASSUME, FORMULAS)
STATED = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.fractions(max_denominator=50).map(lambda q: f"{q.numerator}/{q.denominator}"),
    st.decimals(-1000, 1000, places=3, allow_nan=False).map(str),
    st.sampled_from(["0", "2**10", "-(3 - 5)", "1/0", "2**-3", "0**-1", "7e2"]),
)


def _evaluated(claim: Claim) -> str:
    """The number the claim's expression comes to, as a first run keeps it."""
    res = check_claim(CONTEXT, dataclasses.replace(claim, value="0", tolerance=None, digits=None))
    assert res.value is not None
    return res.value


@settings(max_examples=150, deadline=None)
@given(
    expr=st.sampled_from(["grid", "recurrence", "ratio", "T - d", "grid / 7"]),
    t=st.integers(1, 60),
    d=st.integers(1, 60),
    stated=STATED,
    tolerance=st.one_of(st.none(), st.sampled_from([0.0, 0.001, 0.05, 0.3, 0.5])),
    digits=st.one_of(st.none(), st.integers(1, 6)),
)
def test_a_value_judged_from_its_kept_number_is_judged_as_sympy_judges_it(
    expr: str, t: int, d: int, stated: str, tolerance: float | None, digits: int | None
) -> None:
    fields: dict[str, Any] = {"id": "c", "kind": "value", "expr": expr, "value": stated}
    fields["where"] = {"T": t, "d": d}
    if tolerance is not None:
        fields["tolerance"] = tolerance
    if digits is not None:
        fields["digits"] = digits
    claim = Claim.from_mapping(fields)
    known = judge_known(claim, _evaluated(claim))
    if known is not None:  # None: sympy's to say (checked by the runner tests above)
        assert known == check_claim(CONTEXT, claim)


def test_a_stated_value_that_is_no_plain_number_is_left_to_sympy() -> None:
    for value in ("grid", "sqrt(2)", "pi", "T", "2**100"):
        claim = Claim.from_mapping({"id": "c", "kind": "value", "expr": "grid", "value": value})
        assert judge_known(claim, "128") is None, value
    counted = Claim.from_mapping({"id": "c", "kind": "value", "cost": "Q", "value": "1"})
    assert judge_known(counted, "1") is None


@pytest.mark.parametrize("number", [Fraction(1, 3), Fraction(-7, 2), Fraction(10**40)])
def test_a_kept_number_reads_back_exactly(number: Fraction) -> None:
    text = f"{number.numerator}/{number.denominator}"
    claim = Claim.from_mapping({"id": "c", "kind": "value", "expr": "grid", "value": text})
    found = judge_known(claim, text)
    assert found is not None and found.ok
