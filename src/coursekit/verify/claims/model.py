"""The claim model: a :class:`Claim` read from its YAML mapping, and the :class:`CheckResult` of
checking one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from math import inf
from typing import Any

from coursekit.records import record
from coursekit.verify.status import STATUSES, Status

CLAIM_KINDS = ("identity", "solve", "value", "order", "inequality", "shape")
RELATIONS = ("<=", ">=", "<", ">")


class ClaimError(ValueError):
    """A claim mapping that cannot be read (unknown kind, missing or wrongly typed field)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field

    def __reduce__(self) -> tuple[Any, ...]:
        return (ClaimError, (self.message, self.field))


def _text(value: object, name: str) -> str:
    if isinstance(value, bool):
        raise ClaimError(f"{name} must be a number or a formula, not a boolean", name)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value
    raise ClaimError(f"{name} must be a number or a formula, not {type(value).__name__}", name)


def _texts(value: object, name: str) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(_text(v, name) for v in value)
    return (_text(value, name),)


@record(frozen=True)
class Claim:
    """One claim, as plain data.  Build from a YAML mapping with :meth:`from_mapping`."""

    id: str
    kind: str
    lhs: str | None = None
    rhs: str | None = None
    expr: str | None = None
    equation: str | None = None
    var: str | None = None  # YAML ``for``
    where: tuple[tuple[str, str], ...] = ()
    solutions: tuple[str, ...] | None = None
    value: str | None = None
    tolerance: float | None = None
    digits: int | None = None
    order: str | None = None
    bound: str = "theta"
    variables: tuple[str, ...] | None = None
    op: str | None = None
    when: tuple[str, ...] = ()
    shape: tuple[str, ...] | None = None  # a shape claim's dimensions ([] for a scalar)
    axes: tuple[str, ...] | None = None  # and, optionally, what each axis indexes
    cost: str | None = None  # value/order: count the multiply-adds of this expression's products
    memory: str | None = None  # value/order: count the entries of this expression's value
    error: str | None = None  # set for a claim that could not be read (see :meth:`invalid`)
    error_field: str | None = None

    @classmethod
    def invalid(cls, id: str, message: str, field: str | None = None) -> Claim:
        """A placeholder for an unreadable claim: checking it reports ``message``."""
        return cls(id=id, kind="invalid", error=message, error_field=field)

    @classmethod
    def read(cls, data: Mapping[str, Any], index: int = 0) -> Claim:
        """Like :meth:`from_mapping`, but an unreadable claim becomes :meth:`invalid`."""
        try:
            return cls.from_mapping(data)
        except ClaimError as exc:
            raw = data.get("id") if isinstance(data, Mapping) else None
            return cls.invalid(
                raw if isinstance(raw, str) and raw else f"#{index + 1}", exc.message, exc.field
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], id: str | None = None) -> Claim:
        """Read a claim from a YAML mapping (``for`` is accepted for ``var``)."""
        known = {f.name for f in fields(cls)} | {"for", "relation", "inequality", "note"}
        for key in data:
            if key not in known:
                raise ClaimError(f"unknown claim field {key!r}", str(key))
        cid = id if id is not None else data.get("id")
        if not isinstance(cid, str) or not cid:
            raise ClaimError("a claim needs an id", "id")
        kind = data.get("kind")
        if kind not in CLAIM_KINDS:
            raise ClaimError(f"claim kind {kind!r} is not one of {', '.join(CLAIM_KINDS)}", "kind")
        kw: dict[str, Any] = {"id": cid, "kind": kind}
        kw.update(_read_fields(data))
        return cls(**kw)

    def to_json(self) -> dict[str, Any]:
        """The fields that differ from their defaults: an empty list that means something
        (`solutions: []`, `shape: []`) is kept, where a field left out is not written."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v == f.default:
                continue
            out[f.name] = (
                [list(p) for p in v]
                if f.name == "where"
                else (list(v) if isinstance(v, tuple) else v)
            )
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Claim:
        kw = dict(data)
        for name in ("solutions", "variables", "when", "shape", "axes"):
            if name in kw:
                kw[name] = tuple(kw[name])
        if "where" in kw:
            kw["where"] = tuple((str(a), str(b)) for a, b in kw["where"])
        return cls(**kw)


def _read_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The claim's fields other than id and kind, checked in a fixed order (the first error wins)."""
    kw: dict[str, Any] = {}
    for name in ("lhs", "rhs", "expr", "equation", "value", "order", "cost", "memory"):
        if data.get(name) is not None:
            kw[name] = _text(data[name], name)
    var = data.get("for", data.get("var"))
    if var is not None:
        if not isinstance(var, str):
            raise ClaimError("for must name a symbol", "for")
        kw["var"] = var
    where = data.get("where") or {}
    if not isinstance(where, Mapping):
        raise ClaimError("where must be a mapping of symbol to value", "where")
    kw["where"] = tuple((str(k), _text(v, f"where.{k}")) for k, v in where.items())
    if data.get("solutions") is not None:
        kw["solutions"] = _texts(data["solutions"], "solutions")
    if data.get("tolerance") is not None:
        kw["tolerance"] = _tolerance(data["tolerance"])
    if data.get("digits") is not None:
        kw["digits"] = _significant_digits(data["digits"])
    if data.get("bound") is not None:
        if data["bound"] not in ("theta", "O"):
            raise ClaimError("bound must be 'theta' or 'O'", "bound")
        kw["bound"] = data["bound"]
    if data.get("variables") is not None:
        kw["variables"] = tuple(str(v) for v in _texts(data["variables"], "variables"))
    kw.update(_dimensions(data))
    kw.update(_relation(data))
    if data.get("when") is not None:
        kw["when"] = _texts(data["when"], "when")
    return kw


def _dimensions(data: Mapping[str, Any]) -> dict[str, Any]:
    """A shape claim's ``shape`` and ``axes``, as tuples of text."""
    kw: dict[str, Any] = {}
    for name in ("shape", "axes"):
        if data.get(name) is not None:
            if not isinstance(data[name], (list, tuple)):
                raise ClaimError(f"{name} must be a list such as [T, d_k]", name)
            kw[name] = tuple(_text(v, name) for v in data[name])
    return kw


def _tolerance(tol: object) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < inf:
        raise ClaimError(
            f"tolerance must be a relative tolerance from 0 up to (not including) 1, not {tol!r}",
            "tolerance",
        )
    if tol >= 1:  # |computed - value| <= |value| already holds for computed = 0
        raise ClaimError(
            f"tolerance {tol!r} is relative and accepts anything from 0 to "
            f"{1 + tol:g} times the value: use a tolerance below 1 (0.01 is 1%)",
            "tolerance",
        )
    return float(tol)


def _significant_digits(dig: object) -> int:
    if isinstance(dig, bool) or not isinstance(dig, int) or not 1 <= dig <= 30:
        raise ClaimError(
            f"digits must be a number of significant digits from 1 to 30, not {dig!r}"
            + (" (zero digits would round every number to 0)" if dig == 0 else ""),
            "digits",
        )
    return dig


def _relation(data: Mapping[str, Any]) -> dict[str, Any]:
    """``relation: a < b`` (or ``inequality:``) as lhs/op/rhs; an explicit ``op`` overrides."""
    kw: dict[str, Any] = {}
    relation = data.get("relation", data.get("inequality"))
    if relation is not None:
        lhs, op, rhs = split_relation(_text(relation, "relation"))
        kw.update(lhs=lhs, op=op, rhs=rhs)
    if data.get("op") is not None:
        if data["op"] not in RELATIONS:
            raise ClaimError(f"op must be one of {' '.join(RELATIONS)}", "op")
        kw["op"] = data["op"]
    return kw


def split_relation(text: str) -> tuple[str, str, str]:
    """``"grid < recurrence"`` -> ``("grid", "<", "recurrence")`` (exactly one relation)."""
    found = [(m.start(), m.group()) for m in re.finditer(r"<=|>=|==|!=|<|>", text)]
    if len(found) != 1 or found[0][1] in ("==", "!="):
        raise ClaimError(f"expected exactly one of < <= > >= in {text!r}", "relation")
    pos, op = found[0]
    return text[:pos].strip(), op, text[pos + len(op) :].strip()


def split_equation(text: str) -> tuple[str, str]:
    parts = text.split("=")
    if len(parts) != 2 or "==" in text or any(c in text for c in "<>!"):
        raise ClaimError(f"expected one '=' in the equation {text!r}", "equation")
    return parts[0].strip(), parts[1].strip()


@record(frozen=True)
class CheckResult:
    status: Status
    message: str
    offset: int | None = None
    field: str | None = None
    value: str | None = None  # the claim's computed number: "p/q" exact, or a decimal

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "offset": self.offset,
            "field": self.field,
            "value": self.value,
        }

    @classmethod
    def from_json(cls, data: object) -> CheckResult | None:
        """The result ``data`` holds, or None for anything of another shape (a kept entry
        is read back through this: a damaged one is no result)."""
        if not isinstance(data, Mapping) or data.get("status") not in STATUSES:
            return None
        message, offset = data.get("message"), data.get("offset")
        field, value = data.get("field"), data.get("value")
        if not isinstance(message, str) or not (offset is None or type(offset) is int):
            return None
        if not all(v is None or isinstance(v, str) for v in (field, value)):
            return None
        return cls(data["status"], message, offset, field, value)


# -- number formatting (pure Python) ---------------------------------------------------------------
