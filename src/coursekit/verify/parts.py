"""What a document's sympy jobs came to, kept by what each job reads: an edit re-runs only the
jobs it changed.

A document's verdicts are cached whole, under the fingerprint of its :class:`MathsSpec`, and
one edited claim changes that fingerprint: every claim and equation of the document went back
to sympy, and a fresh process paid sympy's import for them. :class:`Parts` keeps, for one
document,

* each job's result under a key of exactly what the job reads: the context every job of the
  document shares (assumptions, formulas, shapes, row-wise functions, the engine's and sympy's
  versions) and the claim or the labelled equation itself;
* for a ``value`` claim whose expression came to an exact number, that number, under a key of
  the claim without its ``id``, ``value``, ``tolerance`` and ``digits``.

:func:`recall` gives what a spec's jobs came to before, or None for each job that must run: a
value claim whose stated value alone changed is judged against the kept number in pure Python
(:func:`coursekit.verify.claims.value.judge_known`). :func:`pending_spec` is the spec of the
jobs that must run, and :func:`remembered` what to keep afterwards: exactly the spec's jobs, so
an entry never outgrows its document. Results that depend on the clock are not kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from coursekit.records import record
from coursekit.verify.claims import CheckResult, Claim
from coursekit.verify.claims.value import judge_known
from coursekit.verify.spec import ENGINE_VERSION, MathsSpec, sympy_version
from coursekit.verify.status import VOLATILE, Subject

#: A job as the runner plans it: (subject, key, index into the spec's claims or equations).
Owner = tuple[Subject, str, int]

#: The claim fields a value claim's number does not depend on.
_STATED = frozenset({"id", "value", "tolerance", "digits"})
_EXACT = re.compile(r"-?[0-9]+(?:/([0-9]+))?")


@record
class Parts:
    """One document's kept job results (``results``: job key -> result) and exact numbers
    (``values``: evaluation key -> ``"p/q"``). Plain data, JSON as it is."""

    results: dict[str, dict[str, Any]]
    values: dict[str, str]

    @classmethod
    def empty(cls) -> Parts:
        return cls({}, {})

    def to_json(self) -> dict[str, Any]:
        return {"results": self.results, "values": self.values}

    @classmethod
    def from_json(cls, data: object) -> Parts:
        """What ``data`` holds; anything of another shape reads as nothing kept."""
        if not isinstance(data, Mapping):
            return cls.empty()
        results, values = data.get("results"), data.get("values")
        if not isinstance(results, dict) or not isinstance(values, dict):
            return cls.empty()
        return cls(
            {k: v for k, v in results.items() if CheckResult.from_json(v) is not None},
            {k: v for k, v in values.items() if isinstance(v, str) and _is_exact(v)},
        )


def recall(spec: MathsSpec, owners: Sequence[Owner], parts: Parts) -> list[CheckResult | None]:
    """What each planned job came to before, or None where it must run now."""
    context = _context(spec)
    found: list[CheckResult | None] = []
    for subject, _key, index in owners:
        kept = CheckResult.from_json(parts.results.get(_job_key(context, spec, subject, index)))
        if kept is None and subject == "claim":
            claim = spec.claims[index]
            number = parts.values.get(_evaluation_key(context, claim) or "")
            kept = judge_known(claim, number) if number is not None else None
        found.append(kept)
    return found


def pending_spec(
    spec: MathsSpec, owners: Sequence[Owner], found: Sequence[CheckResult | None]
) -> MathsSpec | None:
    """The spec of the jobs ``recall`` found nothing for (the same context, those claims and
    equations only, in order), or None when every job is known."""
    todo = [owner for owner, kept in zip(owners, found, strict=True) if kept is None]
    if not todo:
        return None
    return MathsSpec(
        assume=spec.assume,
        formulas=spec.formulas,
        claims=tuple(spec.claims[i] for subject, _, i in todo if subject == "claim"),
        equations=tuple(spec.equations[i] for subject, _, i in todo if subject == "equation"),
        shapes=spec.shapes,
        rowwise=spec.rowwise,
    )


def remembered(
    spec: MathsSpec, owners: Sequence[Owner], results: Sequence[CheckResult], before: Parts
) -> Parts:
    """What to keep of ``spec``'s jobs, given what each came to (clock-dependent ones aside)
    and what was kept ``before``: a claim's number stays known through a verdict that
    shows none (a value refused for its tolerance, say)."""
    context = _context(spec)
    parts = Parts.empty()
    for (subject, _key, index), res in zip(owners, results, strict=True):
        if res.status in VOLATILE:
            continue
        parts.results[_job_key(context, spec, subject, index)] = res.to_json()
        evaluation = _evaluation_key(context, spec.claims[index]) if subject == "claim" else None
        if evaluation is None:
            continue
        if res.status in ("ok", "false") and res.value is not None and _is_exact(res.value):
            parts.values[evaluation] = res.value
        elif evaluation in before.values:
            parts.values[evaluation] = before.values[evaluation]
    return parts


def _context(spec: MathsSpec) -> str:
    """What every job of the spec reads besides its own claim or equation."""
    shared = {k: v for k, v in spec.to_json().items() if k not in ("claims", "equations")}
    shared.pop("numbers", None)
    shared.pop("quiz", None)
    return _digest({"engine": ENGINE_VERSION, "sympy": sympy_version(), "context": shared})


def _job_key(context: str, spec: MathsSpec, subject: Subject, index: int) -> str:
    job: Any = spec.claims[index].to_json() if subject == "claim" else list(spec.equations[index])
    return _digest({"context": context, subject: job})


def _evaluation_key(context: str, claim: Claim) -> str | None:
    """Where a value claim's exact number is kept: the claim as sympy evaluates it."""
    if claim.kind != "value" or claim.error is not None:
        return None
    read = {k: v for k, v in claim.to_json().items() if k not in _STATED}
    return _digest({"context": context, "evaluates": read})


def _digest(payload: Mapping[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _is_exact(text: str) -> bool:
    """Whether a claim's value is an exact number (``"p/q"``, an integer), not a decimal
    (nor a fraction over 0, which no run writes: a damaged entry)."""
    found = _EXACT.fullmatch(text)
    if found is None:
        return False
    denominator = found.group(1)
    return denominator is None or denominator.strip("0") != ""


__all__ = ["Owner", "Parts", "pending_spec", "recall", "remembered"]
