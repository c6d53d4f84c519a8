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

:func:`job_keys` works out each job's keys once; :func:`recall` gives what the jobs came to
before, or None for each job that must run: a value claim whose stated value alone changed is
judged against the kept number in pure Python
(:func:`coursekit.verify.claims.value.judge_known`). :func:`pending_spec` is the spec of the
jobs that must run, and :func:`remembered` what to keep afterwards: exactly the spec's jobs, so
an entry never outgrows its document. Results that depend on the clock are not kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from coursekit.records import record
from coursekit.verify.claims import CheckResult, Claim
from coursekit.verify.claims.value import judge_known
from coursekit.verify.spec import ENGINE_VERSION, MathsSpec, digest, sympy_version
from coursekit.verify.status import VOLATILE, Subject

#: A job as the runner plans it: (subject, key, index into the spec's claims or equations).
Owner = tuple[Subject, str, int]

#: The claim fields a value claim's number does not depend on.
_STATED = frozenset({"id", "value", "tolerance", "digits"})
_EXACT = re.compile(r"-?[0-9]+(?:/([0-9]+))?")


@record
class Parts:
    """One document's kept job results (``results``: job key -> result) and exact numbers
    (``values``: evaluation key -> ``"p/q"``)."""

    results: dict[str, CheckResult]
    values: dict[str, str]

    @classmethod
    def empty(cls) -> Parts:
        return cls({}, {})

    def to_json(self) -> dict[str, Any]:
        return {
            "results": {key: res.to_json() for key, res in self.results.items()},
            "values": self.values,
        }

    @classmethod
    def from_json(cls, data: object) -> Parts:
        """What ``data`` holds; anything of another shape reads as nothing kept."""
        if not isinstance(data, Mapping):
            return cls.empty()
        results, values = data.get("results"), data.get("values")
        if not isinstance(results, dict) or not isinstance(values, dict):
            return cls.empty()
        read = {key: CheckResult.from_json(value) for key, value in results.items()}
        return cls(
            {key: res for key, res in read.items() if res is not None},
            {k: v for k, v in values.items() if isinstance(v, str) and _is_exact(v)},
        )


@record(frozen=True)
class JobKeys:
    """Where a job's result is kept, and a value claim's number (None: not a value claim)."""

    result: str
    number: str | None


def job_keys(spec: MathsSpec, owners: Sequence[Owner]) -> list[JobKeys]:
    """Each planned job's keys: what the job reads, in the context its document shares."""
    shared = {
        k: v
        for k, v in spec.to_json().items()
        if k not in ("claims", "equations", "numbers", "quiz")
    }
    context = digest({"engine": ENGINE_VERSION, "sympy": sympy_version(), "context": shared})
    keys: list[JobKeys] = []
    for subject, _key, index in owners:
        if subject == "claim":
            claim = spec.claims[index]
            job: Any = claim.to_json()
            number = _number_key(context, claim)
        else:
            job, number = list(spec.equations[index]), None
        keys.append(JobKeys(digest({"context": context, subject: job}), number))
    return keys


def recall(
    spec: MathsSpec, owners: Sequence[Owner], keys: Sequence[JobKeys], parts: Parts
) -> list[CheckResult | None]:
    """What each planned job came to before, or None where it must run now."""
    found: list[CheckResult | None] = []
    for (_subject, _key, index), key in zip(owners, keys, strict=True):
        kept = parts.results.get(key.result)
        if kept is None and key.number is not None:
            number = parts.values.get(key.number)
            kept = judge_known(spec.claims[index], number) if number is not None else None
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


def remembered(keys: Sequence[JobKeys], results: Sequence[CheckResult], before: Parts) -> Parts:
    """What to keep of a spec's jobs, given what each came to (clock-dependent ones aside)
    and what was kept ``before``: a claim's number stays known through a verdict that
    shows none (a value refused for its tolerance, say)."""
    parts = Parts.empty()
    for key, res in zip(keys, results, strict=True):
        if res.status in VOLATILE:
            continue
        parts.results[key.result] = res
        if key.number is None:
            continue
        if res.status in ("ok", "false") and res.value is not None and _is_exact(res.value):
            parts.values[key.number] = res.value
        elif key.number in before.values:
            parts.values[key.number] = before.values[key.number]
    return parts


def _number_key(context: str, claim: Claim) -> str | None:
    """Where a value claim's exact number is kept: the claim as sympy evaluates it."""
    if claim.kind != "value" or claim.error is not None:
        return None
    read = {k: v for k, v in claim.to_json().items() if k not in _STATED}
    return digest({"context": context, "evaluates": read})


def _is_exact(text: str) -> bool:
    """Whether a claim's value is an exact number (``"p/q"``, an integer), not a decimal
    (nor a fraction over 0, which no run writes: a damaged entry)."""
    found = _EXACT.fullmatch(text)
    if found is None:
        return False
    denominator = found.group(1)
    return denominator is None or denominator.strip("0") != ""


__all__ = ["JobKeys", "Owner", "Parts", "job_keys", "pending_spec", "recall", "remembered"]
