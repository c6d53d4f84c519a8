r"""Claims about declared formulas, and the checks that tie the prose to them.

A :class:`Claim` is plain data (strings and numbers, as read from YAML).  :class:`Context` holds a
lesson's assumptions and parsed formulas; :func:`check_claim` checks one claim in it.  Every
result is a :class:`CheckResult` whose ``status`` is one of

* ``"ok"``       -- proven;
* ``"false"``    -- disproven (the message shows both sides, often at a counterexample point);
* ``"unproven"`` -- sympy could not decide either way (distinct from false);
* ``"error"``    -- the claim itself is malformed (bad syntax, unknown field, missing formula);
  ``offset`` and ``field`` then point into the offending text;
* ``"crashed"``  -- sympy raised, or ran out of memory or recursion depth: no verdict at all.

Claim kinds and their precise semantics (``where`` substitutions are applied first, to every
expression of the claim, simultaneously; assumptions are the lesson's ``assume``):

``identity``   ``lhs == rhs``: ``simplify(lhs - rhs) == 0``.  If sympy leaves a non-zero
               difference, the two sides are compared at sample points: a point where they differ
               makes the claim false, otherwise it is unproven.
``solve``      ``equation: "a = b"`` (or ``lhs``/``rhs``), ``for: T``: the set of solutions of
               ``a - b = 0`` for the variable, under the assumptions on every symbol (sympy's
               ``solve`` discards solutions that contradict them), equals the set ``solutions``
               (compared element-wise up to simplification).  With exactly one numeric solution,
               that number is the claim's value.
``value``      ``expr`` evaluated at ``where`` is a number equal to ``value``: exactly; or, with
               ``tolerance: r`` (``0 <= r < 1``; none around a value of 0),
               ``|computed - value| <= r * |value|``; and/or, with ``digits: n`` (``1 <= n <= 30``),
               the computed value rounded (half up) to ``n`` *significant* digits is ``value``
               (10.24 to 2 digits is 10; 1.953125 to 3 digits is 1.95).  When both are given,
               both must hold.  The computed number is the claim's value.
``order``      ``expr`` is Theta(``order``) as *all* variables tend to infinity independently: there
               are constants ``0 < c <= C`` and ``N`` with ``c*order <= expr <= C*order`` whenever
               every variable is ``>= N``.  Variables are ``variables`` if given, else every free
               symbol of ``expr`` and ``order``.  For a polynomial ``expr`` and a monomial ``order``
               ``m`` this holds iff every monomial of ``expr`` divides ``m`` (no exponent exceeds
               ``m``'s) and the coefficient of ``m`` itself is positive; that is what is checked.
               ``bound: O`` checks only the upper bound.  Otherwise, with one variable, the limit
               of ``expr/order`` must be finite and positive; with several, a limit along the
               diagonal that is 0 or infinite disproves the claim, anything else is unproven.
``inequality`` ``lhs OP rhs`` (``op`` one of ``< <= > >=``, or ``relation: "a < b"``) holds for
               every value of the symbols allowed by the assumptions and the ``when`` conditions
               (e.g. ``T < d``).  Proven by the sign of the factored difference (each factor's
               sign from the assumptions or from a condition), or by writing a condition
               ``x < y`` as ``y = x + s`` with ``s > 0`` and letting sympy see that the
               difference is positive.  A sample point that satisfies the conditions and breaks
               the inequality makes it false; otherwise it is unproven.

:func:`check_number` (a number as written in the prose against a claim's value) and
:func:`check_quiz_answer` are pure Python and do not import sympy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from math import inf
from typing import TYPE_CHECKING, Any

from coursekit.verify.expr import (
    DEFAULT_LIMITS,
    FormulaError,
    Limits,
    SymbolTable,
    SympyExpr,
    expand,
    parse_formula,
    parse_formulas,
    sympy_module,
    to_sympy,
)
from coursekit.verify.latex import parse_latex_sides
from coursekit.verify.status import Status
from coursekit.verify.tree import Name, Node, first_offset, free_names

if TYPE_CHECKING:
    import random

CLAIM_KINDS = ("identity", "solve", "value", "order", "inequality")
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


@dataclass(frozen=True)
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
        for name in ("lhs", "rhs", "expr", "equation", "value", "order"):
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
            tol = data["tolerance"]
            if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < inf:
                raise ClaimError(
                    f"tolerance must be a relative tolerance from 0 up to (not including) 1, "
                    f"not {tol!r}",
                    "tolerance",
                )
            if tol >= 1:  # |computed - value| <= |value| already holds for computed = 0
                raise ClaimError(
                    f"tolerance {tol!r} is relative and accepts anything from 0 to "
                    f"{1 + tol:g} times the value: use a tolerance below 1 (0.01 is 1%)",
                    "tolerance",
                )
            kw["tolerance"] = float(tol)
        if data.get("digits") is not None:
            dig = data["digits"]
            if isinstance(dig, bool) or not isinstance(dig, int) or not 1 <= dig <= 30:
                raise ClaimError(
                    f"digits must be a number of significant digits from 1 to 30, not {dig!r}"
                    + (" (zero digits would round every number to 0)" if dig == 0 else ""),
                    "digits",
                )
            kw["digits"] = dig
        if data.get("bound") is not None:
            if data["bound"] not in ("theta", "O"):
                raise ClaimError("bound must be 'theta' or 'O'", "bound")
            kw["bound"] = data["bound"]
        if data.get("variables") is not None:
            kw["variables"] = tuple(str(v) for v in _texts(data["variables"], "variables"))
        relation = data.get("relation", data.get("inequality"))
        if relation is not None:
            lhs, op, rhs = split_relation(_text(relation, "relation"))
            kw.update(lhs=lhs, op=op, rhs=rhs)
        if data.get("op") is not None:
            if data["op"] not in RELATIONS:
                raise ClaimError(f"op must be one of {' '.join(RELATIONS)}", "op")
            kw["op"] = data["op"]
        if data.get("when") is not None:
            kw["when"] = _texts(data["when"], "when")
        return cls(**kw)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or v == () or (f.name == "bound" and v == "theta"):
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
        for name in ("solutions", "variables", "when"):
            if name in kw:
                kw[name] = tuple(kw[name])
        if "where" in kw:
            kw["where"] = tuple((str(a), str(b)) for a, b in kw["where"])
        return cls(**kw)


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


@dataclass(frozen=True)
class CheckResult:
    status: Status
    message: str
    offset: int | None = None
    field: str | None = None
    value: str | None = None  # the claim's computed number: "p/q" exact, or a decimal

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# -- number formatting (pure Python) ---------------------------------------------------------------


def value_text(value: Fraction | Decimal | int) -> str:
    """Exact text for a value: ``"26214400"``, ``"125/64"``; decimals stay decimal."""
    if isinstance(value, Decimal):
        return str(value)
    q = Fraction(value)
    # Through Decimal: int -> str refuses more than 4,300 digits, and a value can have more.
    num, den = _digits_text(q.numerator), _digits_text(q.denominator)
    return num if q.denominator == 1 else f"{num}/{den}"


def _digits_text(n: int) -> str:
    return str(Decimal(n))


def parse_value_text(text: str) -> Fraction:
    if "/" in text:
        a, b = text.split("/")
        return Fraction(Decimal(a)) / Fraction(Decimal(b))
    return Fraction(Decimal(text))


#: Integers longer than this (about 1,000 digits) are shown in scientific notation.
_SHOWN_BITS = 3322


def show(value: Fraction) -> str:
    """A number as a reader would write it: ``26,214,400``, ``1.953125``, ``0.3333333333…``."""
    if value.denominator == 1:
        if value.numerator.bit_length() > _SHOWN_BITS:  # too long to print in full
            return f"{Decimal(value.numerator):.10g}\N{HORIZONTAL ELLIPSIS}"
        return f"{value.numerator:,}"
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:
        s = str(Decimal(value.numerator) / Decimal(value.denominator))
        if len(s) <= 24:
            return s
    approx = Decimal(value.numerator) / Decimal(value.denominator)
    return f"{approx:.10g}\N{HORIZONTAL ELLIPSIS}"


# -- the prose side: numbers as written -----------------------------------------------------------

_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "a hundred": 100,
    "thousand": 1000,
    "a thousand": 1000,
}
_SCALES = {
    "thousand": 3,
    "k": 3,
    "million": 6,
    "m": 6,
    "billion": 9,
    "bn": 9,
    "trillion": 12,
}
_APPROX = ("about", "approximately", "roughly", "around", "nearly", "almost", "some", "≈", "~", "∼")
_NUMBER_RE = re.compile(r"^(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?$")


@dataclass(frozen=True)
class Written:
    """A number as written: its value and the half-width of the interval it stands for."""

    value: Fraction
    half_ulp: Fraction
    approximate: bool


def read_number(text: str) -> Written:
    """Read a number as the prose writes it, or raise ValueError.

    Accepts ``26,214,400``, ``26214400``, thin or no-break spaces as thousands separators,
    ``{,}`` and ``\\,`` from LaTeX, decimals ``1.95``, a sign (``-`` or U+2212), a scale word
    (``2.56 million``, ``512k``), a percentage (``19.5%``), small number words (``ten``), and a
    leading ``about``/``≈``/``~``.  The precision is the last written digit: ``1.95`` stands for
    [1.945, 1.955], ``2.56 million`` for [2,555,000, 2,565,000].
    """
    s = text.strip().lower()
    approximate = False
    changed = True
    while changed:
        changed = False
        for marker in _APPROX:
            if s.startswith(marker) and (
                not marker.isalpha() or s[len(marker) : len(marker) + 1] in (" ", "")
            ):
                s = s[len(marker) :].strip()
                approximate = changed = True
    s = s.removesuffix("×").removesuffix("times").strip()
    sign = 1
    if s[:1] in ("-", "\N{MINUS SIGN}"):
        sign, s = -1, s[1:].strip()
    percent = s.endswith("%")
    if percent:
        s = s[:-1].strip()
    if s in _WORDS:
        return Written(
            Fraction(sign * _WORDS[s]) / (100 if percent else 1), Fraction(1, 2), approximate
        )
    scale = 0
    m = re.match(r"^(.*?)(?:\s*)(thousand|million|billion|trillion|bn|k|m)$", s)
    if m and m.group(1):
        s, scale = m.group(1).strip(), _SCALES[m.group(2)]
    for sep in ("{,}", "\\,", "\u2009", "\u202f", "\u00a0", "'"):
        s = s.replace(sep, ",")
    s = re.sub(r"(?<=\d) (?=\d{3}\b)", ",", s)
    nm = _NUMBER_RE.match(s)
    if not nm:
        raise ValueError(f"cannot read {text!r} as a number")
    decimals = len(nm.group("frac") or "")
    value = Fraction(
        Decimal(nm.group("int").replace(",", "") + ("." + nm.group("frac") if decimals else ""))
    )
    unit = Fraction(10) ** scale / (100 if percent else 1)
    half = Fraction(1, 2) * Fraction(10) ** -decimals * unit
    return Written(sign * value * unit, half, approximate)


def check_number(
    text: str,
    value: str | Fraction | Decimal | int,
    *,
    tolerance: float | None = None,
    subject: str = "the claim",
) -> CheckResult:
    """Does the number written in the prose show ``value`` (a claim's computed number)?

    The written digits must equal the value rounded to the written precision (``1.95`` for
    1.953125 passes, ``1.96`` fails; ``26,214,400`` must be exact to the unit).  If the claim has
    a relative ``tolerance``, a number within it also passes ("about ten" for 10.24).
    """
    try:
        written = read_number(text)
    except ValueError as exc:
        return CheckResult("error", str(exc))
    if isinstance(value, str):
        try:
            exact = parse_value_text(value)
        except (ValueError, ZeroDivisionError, InvalidOperation):
            return CheckResult("error", f"{subject} has no numeric value ({value!r})")
    else:
        exact = Fraction(value)
    diff = abs(written.value - exact)
    if diff <= written.half_ulp:
        return CheckResult("ok", f"{text} shows {show(exact)}", value=value_text(exact))
    if tolerance is not None and diff <= Fraction(tolerance) * abs(exact):
        return CheckResult(
            "ok", f"{text} is within {tolerance:g} of {show(exact)}", value=value_text(exact)
        )
    return CheckResult(
        "false",
        f"the prose says {text.strip()}, but {subject} computes {show(exact)}",
        value=value_text(exact),
    )


def check_quiz_answer(
    answer: float | int | str,
    margin: float | int | str,
    value: str | Fraction | int,
    *,
    subject: str = "the claim",
) -> CheckResult:
    """``|answer - value| <= margin`` for a numeric quiz answer checked against a claim."""
    try:
        a = Fraction(Decimal(str(answer)))
        m = Fraction(Decimal(str(margin)))
        v = parse_value_text(value) if isinstance(value, str) else Fraction(value)
    except (ValueError, InvalidOperation, ZeroDivisionError, OverflowError):  # OverflowError: inf
        return CheckResult(
            "error", f"cannot read quiz answer {answer!r} (margin {margin!r}) as numbers"
        )
    if abs(a - v) <= m:
        return CheckResult("ok", f"answer {show(a)} matches {show(v)}", value=value_text(v))
    return CheckResult(
        "false",
        f"the quiz answer is {show(a)} (margin {show(m)}), but {subject} computes {show(v)}",
        value=value_text(v),
    )


# -- the sympy side -------------------------------------------------------------------------------


class Context:
    """A lesson's assumptions and declared formulas, parsed once (sympy is imported lazily)."""

    def __init__(
        self,
        assume: Mapping[str, Iterable[str]] | None = None,
        formulas: Mapping[str, str] | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        seed: int = 20240601,
    ):
        self.limits = limits
        self.table = SymbolTable(assume)
        self.texts = dict(formulas or {})
        self.trees, self.errors = parse_formulas(self.texts, limits=limits)
        self.seed = seed

    def node(self, text: str, field: str) -> Node:
        try:
            node = parse_formula(text, limits=self.limits, source=field)
        except FormulaError as exc:
            exc.source = field
            raise
        for name in sorted(free_names(node)):
            if name in self.errors:
                raise FormulaError(
                    f"uses formula {name!r}, which has an error",
                    first_offset(node, name) or 0,
                    text,
                    field,
                )
        return node

    def expr(self, text: str, field: str) -> SympyExpr:
        node = self.node(text, field)
        try:
            node = expand(node, self.trees, limits=self.limits)
        except FormulaError as exc:
            exc.text, exc.source = text, field
            raise
        return to_sympy(node, self.table)

    def formula(self, name: str) -> SympyExpr:
        if name in self.errors:
            raise self.errors[name]
        if name not in self.trees:
            raise FormulaError(f"no formula named {name!r}", 0, "", name)
        return to_sympy(expand(Name(name, 0), self.trees, limits=self.limits), self.table)

    def where(self, claim: Claim) -> dict[Any, Any]:
        subs: dict[Any, Any] = {}
        for key, text in claim.where:
            fld = f"where.{key}"
            if not key.isidentifier() or key in self.trees:
                raise FormulaError(f"where: {key!r} is not a symbol", 0, key, fld)
            subs[self.table.symbol(key)] = self.expr(text, fld)
        return subs


def _where_text(claim: Claim) -> str:
    return ", ".join(f"{k}={v}" for k, v in claim.where)


def _at(claim: Claim) -> str:
    w = _where_text(claim)
    return f" at {w}" if w else ""


def _subs(e: SympyExpr, subs: Mapping[Any, Any]) -> SympyExpr:
    return e.subs(subs, simultaneous=True) if subs else e


def _fmt(e: SympyExpr) -> str:
    sp = sympy_module()
    if getattr(e, "is_Rational", False):
        return show(Fraction(int(e.p), int(e.q)))
    return str(sp.sstr(e))


def _exact(e: SympyExpr) -> Fraction | None:
    if getattr(e, "is_Rational", False):
        return Fraction(int(e.p), int(e.q))
    return None


def _number_text(e: SympyExpr) -> str:
    q = _exact(e)
    if q is not None:
        return value_text(q)
    return str(sympy_module().N(e, 40))


def _require(value: str | None, name: str, claim: Claim) -> str:
    if value is None or value == "":
        raise ClaimError(f"a {claim.kind} claim needs {name}", name)
    return value


def _sample(
    ctx: Context,
    symbols: Sequence[Any],
    rng: random.Random,
    conditions: Sequence[tuple[Any, bool]] = (),
    tries: int = 400,
) -> Iterable[dict[Any, Any]]:
    """Points respecting the symbols' assumptions (and the conditions ``g > 0`` / ``g >= 0``)."""
    sp = sympy_module()
    found = 0
    for _ in range(tries):
        point: dict[Any, Any] = {}
        for s in symbols:
            integer = bool(s.is_integer)
            if s.is_positive or s.is_nonnegative:
                lo, hi = 1, 2000
            elif s.is_negative or s.is_nonpositive:
                lo, hi = -2000, -1
            else:
                lo, hi = -2000, 2000
            scale = rng.choice((1, 1, 10, 100)) if hi > 10 else 1
            n = rng.randint(
                max(lo, -(hi // scale)) if lo < 0 else lo, max(lo, hi // scale) if hi > 0 else hi
            )
            if integer:
                point[s] = sp.Integer(n)
            else:
                point[s] = (
                    sp.Rational(n * rng.randint(1, 7), rng.randint(1, 7))
                    if n
                    else sp.Rational(1, 3)
                )
        ok = True
        for g, strict in conditions:
            v = g.subs(point)
            if not v.is_number:
                ok = False
                break
            v = sp.N(v, 30)
            if (v <= 0) if strict else (v < 0):
                ok = False
                break
        if ok:
            found += 1
            yield point
            if found >= 40:
                return


def _point_text(point: Mapping[Any, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(point.items(), key=lambda kv: str(kv[0])))


def _differs(ctx: Context, diff: SympyExpr, claim_id: str) -> dict[Any, Any] | None:
    """A sample point where ``diff`` is clearly non-zero, or None."""
    import random

    sp = sympy_module()
    rng = random.Random(f"{ctx.seed}:{claim_id}")
    syms = sorted(diff.free_symbols, key=str)
    for point in _sample(ctx, syms, rng):
        try:
            v = sp.N(diff.subs(point), 40)
        except Exception:  # evaluation trouble at one point is not a verdict
            continue
        if v.is_number and v.is_finite and not v.has(sp.I) and abs(v) > sp.Float(10) ** -20:
            return point
    return None


def check_identity(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
    subs = ctx.where(claim)
    lhs = _subs(ctx.expr(lhs_t, "lhs"), subs)
    rhs = _subs(ctx.expr(rhs_t, "rhs"), subs)
    diff = sp.simplify(sp.cancel(lhs - rhs))
    if diff == 0:
        return CheckResult("ok", f"{lhs_t} = {rhs_t}")
    shown_l, shown_r = _fmt(sp.simplify(lhs)), _fmt(sp.simplify(rhs))
    cond = f" with {_where_text(claim)}" if claim.where else ""
    point = _differs(ctx, diff, claim.id)
    if point is not None:
        right = (
            rhs_t if shown_r.replace(" ", "") == rhs_t.replace(" ", "") else f"{rhs_t} = {shown_r}"
        )
        return CheckResult(
            "false",
            f"{lhs_t}{cond} is {shown_l}, not {right} (they differ at {_point_text(point)})",
        )
    return CheckResult(
        "unproven",
        f"could not prove {lhs_t} = {rhs_t}{cond}: the difference simplifies to {_fmt(diff)}, "
        "which is zero at every sample point",
    )


def check_solve(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    if claim.equation is not None:
        try:
            lhs_t, rhs_t = split_equation(claim.equation)
        except ClaimError as exc:
            raise ClaimError(exc.message, "equation") from None
        fields_ = ("equation", "equation")
    else:
        lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
        fields_ = ("lhs", "rhs")
    var_name = _require(claim.var, "for", claim)
    if not var_name.isidentifier() or var_name in ctx.trees:
        raise ClaimError(f"for: {var_name!r} is not a symbol", "for")
    if claim.solutions is None:
        raise ClaimError("a solve claim needs solutions (a list, possibly empty)", "solutions")
    subs = ctx.where(claim)
    var = ctx.table.symbol(var_name)
    if var in subs:
        raise ClaimError(f"where substitutes {var_name}, the variable solved for", "where")
    lhs = _subs(ctx.expr(lhs_t, fields_[0]), subs)
    rhs = _subs(ctx.expr(rhs_t, fields_[1]), subs)
    expected = [_subs(ctx.expr(t, f"solutions[{i}]"), subs) for i, t in enumerate(claim.solutions)]
    try:
        found = sp.solve(sp.Eq(lhs, rhs), var, dict=False)
    except NotImplementedError as exc:
        return CheckResult(
            "unproven", f"sympy could not solve {lhs_t} = {rhs_t} for {var_name}: {exc}"
        )
    if not isinstance(found, list) or any(isinstance(f, (dict, tuple)) for f in found):
        return CheckResult("unproven", f"sympy gave no plain solution list for {var_name}: {found}")
    remaining = list(found)
    unmatched = []
    for e in expected:
        for i, f in enumerate(remaining):
            if sp.simplify(f - e) == 0:
                del remaining[i]
                break
        else:
            unmatched.append(e)
    eq_text = claim.equation or f"{lhs_t} = {rhs_t}"
    found_text = "[" + ", ".join(_fmt(f) for f in found) + "]"
    claimed_text = "[" + ", ".join(claim.solutions) + "]"
    value = _number_text(found[0]) if len(found) == 1 and found[0].is_number else None
    assumed = _assumption_text(ctx, [var, *lhs.free_symbols, *rhs.free_symbols])
    if unmatched or remaining:
        return CheckResult(
            "false",
            f"solving {eq_text}{_at(claim)} for {var_name}{assumed} gives {found_text}, "
            f"the claim says {claimed_text}",
            value=value,
        )
    return CheckResult("ok", f"{eq_text} for {var_name} gives {found_text}", value=value)


def _assumption_text(ctx: Context, symbols: Iterable[Any]) -> str:
    parts = []
    for s in sorted({str(s) for s in symbols}):
        kinds = ctx.table.assumptions(s)
        if kinds:
            parts.append(f"{s} " + " ".join(sorted(kinds)))
    return f" ({'; '.join(parts)})" if parts else ""


def _magnitude(q: Fraction) -> int:
    """``e`` with ``10**e <= |q| < 10**(e+1)`` (``q`` non-zero)."""
    a = abs(q)
    e = len(_digits_text(a.numerator)) - len(_digits_text(a.denominator))
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e


def round_significant(q: Fraction, digits: int) -> Fraction:
    """``q`` rounded half up (away from zero) to ``digits`` significant digits."""
    if q == 0 or digits <= 0:
        return Fraction(0) if digits <= 0 else q
    unit = Fraction(10) ** (_magnitude(q) - digits + 1)
    n = int(abs(q) / unit + Fraction(1, 2))
    return (n * unit) if q > 0 else -(n * unit)


def check_value(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    expr_t = _require(claim.expr, "expr", claim)
    value_t = _require(claim.value, "value", claim)
    subs = ctx.where(claim)
    computed = _subs(ctx.expr(expr_t, "expr"), subs)
    computed = sp.nsimplify(computed) if computed.has(sp.Float) else sp.simplify(computed)
    expected = ctx.expr(value_t, "value")
    if computed.free_symbols:
        names = ", ".join(sorted(str(s) for s in computed.free_symbols))
        return CheckResult(
            "false", f"{expr_t}{_at(claim)} still depends on {names}: it is {_fmt(computed)}"
        )
    if expected.free_symbols:
        raise FormulaError("value must be a number", 0, value_t, "value")
    if claim.tolerance and expected == 0:
        raise ClaimError(
            "tolerance is relative to the value, and a tolerance relative to 0 accepts only 0: "
            "drop `tolerance` (the value is checked exactly)",
            "tolerance",
        )
    value = _number_text(computed)
    head = f"{expr_t}{_at(claim)} is {_fmt(computed)}"
    if claim.digits is not None:
        q = _exact(computed)
        if q is None:
            q = Fraction(Decimal(str(sp.N(computed, 60))))
        exp_q = _exact(sp.nsimplify(expected))
        if exp_q is None:
            raise FormulaError(
                "value must be a rational number when digits is given", 0, value_t, "value"
            )
        rounded = round_significant(q, claim.digits)
        shown = f"{show(rounded)} to {claim.digits} significant digits"
        if rounded != exp_q:
            return CheckResult("false", f"{head}, {shown}; the claim says {value_t}", value=value)
        if claim.tolerance is None:
            return CheckResult("ok", f"{head}, {shown}", value=value)
    if claim.tolerance is not None:
        c, e = sp.N(computed, 50), sp.N(expected, 50)
        bound = sp.Float(claim.tolerance, 50) * abs(e)
        if abs(c - e) <= bound:
            return CheckResult(
                "ok", f"{head}, within {claim.tolerance:g} of {value_t}", value=value
            )
        rel = abs(c - e) / abs(e) if e != 0 else abs(c - e)
        return CheckResult(
            "false",
            f"{head}; the claim says {value_t} within {claim.tolerance:g}, "
            f"but they differ by {float(rel):.3g} (relative)",
            value=value,
        )
    diff = sp.simplify(computed - expected)
    if diff == 0:
        return CheckResult("ok", head, value=value)
    if diff.is_number and diff.is_zero is None and abs(sp.N(diff, 50)) < sp.Float(10) ** -40:
        return CheckResult(
            "unproven", f"could not prove {head} equals {value_t} exactly", value=value
        )
    return CheckResult("false", f"{head}, the claim says {_fmt(expected)}", value=value)


def check_order(ctx: Context, claim: Claim) -> CheckResult:
    """Θ (or O) as every variable grows, each on its own or together: see verify.order."""
    from coursekit.verify.order import decide

    sp = sympy_module()
    expr_t = _require(claim.expr, "expr", claim)
    order_t = _require(claim.order, "order", claim)
    subs = ctx.where(claim)
    e = sp.expand(_subs(ctx.expr(expr_t, "expr"), subs))
    o = sp.expand(_subs(ctx.expr(order_t, "order"), subs))
    if claim.variables is not None:
        variables = [ctx.table.symbol(v) for v in claim.variables]
    else:
        variables = sorted(e.free_symbols | o.free_symbols, key=str)
    if not variables:
        raise ClaimError("an order claim needs at least one variable", "variables")
    if o.is_polynomial(*variables) and len(sp.Poly(o, *variables).terms()) != 1:
        raise FormulaError("order must be a single term such as T*d**2", 0, order_t, "order")
    big = "\N{GREEK CAPITAL LETTER THETA}" if claim.bound == "theta" else "O"
    cond = f" with {_where_text(claim)}" if claim.where else ""
    head = f"{expr_t}{cond} is {_fmt(e)}"
    status, why = decide(e, o, variables, claim.bound == "theta")
    if status == "ok":
        return CheckResult("ok", f"{head}, which is {big}({_fmt(o)})" + (f": {why}" if why else ""))
    if status == "false":
        return CheckResult("false", f"{head}, not {big}({_fmt(o)}): {why}")
    if status == "error":
        raise FormulaError(why, 0, order_t, "order")
    return CheckResult("unproven", f"could not prove {expr_t} is {big}({order_t}): {why}")


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _condition(
    ctx: Context, text: str, index: int, subs: Mapping[Any, Any]
) -> tuple[Any, bool, Any, Any, str]:
    """``"T < d"`` -> (d - T, strict, T, d, op) meaning ``d - T > 0``."""
    fld = f"when[{index}]"
    try:
        a_t, op, b_t = split_relation(text)
    except ClaimError as exc:
        raise ClaimError(exc.message, fld) from None
    a = _subs(ctx.expr(a_t, fld), subs)
    b = _subs(ctx.expr(b_t, fld), subs)
    if op in (">", ">="):
        a, b, op = b, a, _FLIP[op]
    return b - a, op == "<", a, b, op


def _sign(f: SympyExpr, conds: Sequence[tuple[Any, bool]]) -> str | None:
    """'+', '0+' (non-negative), '-', '0-' or None."""
    sp = sympy_module()
    if f.is_positive:
        return "+"
    if f.is_negative:
        return "-"
    for g, strict in conds:
        for target, flip in ((g, False), (-g, True)):
            r = sp.cancel(f / target)
            if r.is_number and r != 0 and r.is_real:
                pos = bool(r > 0) != flip
                if strict:
                    return "+" if pos else "-"
                return "0+" if pos else "0-"
    if f.is_nonnegative:
        return "0+"
    if f.is_nonpositive:
        return "0-"
    return None


def _factored_sign(d: SympyExpr, conds: Sequence[tuple[Any, bool]]) -> str | None:
    sp = sympy_module()
    fd = sp.factor(d)
    sign, strict = 1, True
    for factor in sp.Mul.make_args(fd):
        base, exp = factor.as_base_exp()
        if exp.is_Integer and int(exp) % 2 == 0:
            s = _sign(base, conds)
            if s in ("+", "-") or base.is_nonzero:
                continue
            strict = False
            continue
        s = _sign(factor, conds)
        if s is None:
            return None
        if s.startswith("0"):
            strict = False
        if s.endswith("-"):
            sign = -sign
    if sign > 0:
        return "+" if strict else "0+"
    return "-" if strict else "0-"


def check_inequality(ctx: Context, claim: Claim) -> CheckResult:
    sp = sympy_module()
    lhs_t, rhs_t = _require(claim.lhs, "lhs", claim), _require(claim.rhs, "rhs", claim)
    op = _require(claim.op, "op", claim)
    if op not in RELATIONS:
        raise ClaimError(f"op must be one of {' '.join(RELATIONS)}", "op")
    subs = ctx.where(claim)
    lhs = _subs(ctx.expr(lhs_t, "lhs"), subs)
    rhs = _subs(ctx.expr(rhs_t, "rhs"), subs)
    d = sp.simplify(rhs - lhs if op in ("<", "<=") else lhs - rhs)  # want d > 0 (or >= 0)
    strict = op in ("<", ">")
    parsed = [_condition(ctx, w, i, subs) for i, w in enumerate(claim.when)]
    conds = [(g, s) for g, s, *_ in parsed]
    rel = f"{lhs_t} {op} {rhs_t}"
    when = f" when {' and '.join(claim.when)}" if claim.when else ""
    good = ("+",) if strict else ("+", "0+")
    # 1. the sign of the factored difference
    if _factored_sign(d, conds) in good:
        return CheckResult("ok", f"{rel}{when}: the difference factors as {_fmt(sp.factor(d))}")
    # 2. write each 'x < y' with a symbol side as y = x + s (s > 0) and let sympy see the sign
    slack_subs: dict[Any, Any] = {}
    for i, (_g, s_strict, a, b, _op) in enumerate(parsed):
        slack = (
            sp.Dummy(f"s{i}", positive=True) if s_strict else sp.Dummy(f"s{i}", nonnegative=True)
        )
        if b.is_Symbol and b not in slack_subs and not a.has(b):
            slack_subs[b] = a + slack
        elif a.is_Symbol and a not in slack_subs and not b.has(a):
            if a.is_positive:
                continue  # a = b - s would lose a's positivity
            slack_subs[a] = b - slack
    if slack_subs:
        d2 = sp.expand(d.subs(slack_subs, simultaneous=True))
        if (d2.is_positive if strict else d2.is_nonnegative) or _factored_sign(d2, []) in good:
            return CheckResult("ok", f"{rel}{when}")
    elif not claim.when and (d.is_positive if strict else d.is_nonnegative):
        return CheckResult("ok", f"{rel}")
    # 3. look for a counterexample
    import random

    rng = random.Random(f"{ctx.seed}:{claim.id}")
    syms = sorted(
        d.free_symbols | set().union(*(g.free_symbols for g in (c[0] for c in conds))), key=str
    )
    for point in _sample(ctx, syms, rng, conds):
        try:
            v = sp.N(d.subs(point), 40)
        except Exception:
            continue
        if not (v.is_number and v.is_real):
            continue
        if (v <= 0) if strict else (v < 0):
            lv, rv = lhs.subs(point), rhs.subs(point)
            return CheckResult(
                "false",
                f"{rel}{when} fails at {_point_text(point)}: {lhs_t} is {_fmt(sp.nsimplify(lv))}, "
                f"{rhs_t} is {_fmt(sp.nsimplify(rv))}",
            )
    return CheckResult("unproven", f"could not prove {rel}{when}; no counterexample found either")


_CHECKERS = {
    "identity": check_identity,
    "solve": check_solve,
    "value": check_value,
    "order": check_order,
    "inequality": check_inequality,
}


def check_claim(ctx: Context, claim: Claim) -> CheckResult:
    """Check one claim; never raises for a problem in the claim (that is an ``error`` result)."""
    if claim.error is not None:
        return CheckResult("error", claim.error, field=claim.error_field)
    checker = _CHECKERS.get(claim.kind)
    if checker is None:
        return CheckResult("error", f"unknown claim kind {claim.kind!r}", field="kind")
    try:
        return checker(ctx, claim)
    except FormulaError as exc:
        return CheckResult("error", exc.message, offset=exc.offset, field=exc.source)
    except ClaimError as exc:
        return CheckResult("error", exc.message, field=exc.field)
    except RecursionError:
        return CheckResult("crashed", "sympy ran out of recursion depth")
    except NotImplementedError as exc:  # sympy's way of saying it cannot decide
        return CheckResult("unproven", f"sympy could not decide: {exc}")
    except (ValueError, TypeError, ArithmeticError, AttributeError) as exc:
        return CheckResult("crashed", f"sympy raised {type(exc).__name__}: {exc}")


def check_equation_latex(
    latex: str,
    declared: str,
    context: Context | None = None,
    *,
    name: str | None = None,
) -> CheckResult:
    """Is the LaTeX the reader sees the same expression as the declared formula text?

    ``declared`` is formula text (or the name of a formula in ``context``).  Every side of an
    ``=`` chain that is not a label must equal it up to algebraic equivalence; a side that is just
    the formula's own name (``\\mathrm{grid}``) counts as a label.
    """
    sp = sympy_module()
    ctx = context or Context()
    try:
        target = ctx.expr(declared, name or "formula")
        sides = parse_latex_sides(latex, limits=ctx.limits)
    except FormulaError as exc:
        return CheckResult("error", exc.message, offset=exc.offset, field=exc.source)
    shown = [
        s
        for s in sides
        if s.node is not None and not (isinstance(s.node, Name) and s.node.id == name)
    ]
    if not shown:
        return CheckResult("error", "the equation shows no expression, only labels", offset=0)
    label = name or "the formula"
    for side in shown:
        assert side.node is not None
        try:
            for n in sorted(free_names(side.node)):
                if n in ctx.errors:
                    raise FormulaError(
                        f"uses formula {n!r}, which has an error", first_offset(side.node, n) or 0
                    )
            e = to_sympy(expand(side.node, ctx.trees, limits=ctx.limits), ctx.table)
        except FormulaError as exc:
            return CheckResult("error", exc.message, offset=exc.offset)
        diff = sp.simplify(sp.cancel(e - target))
        if diff == 0:
            continue
        point = _differs(ctx, diff, f"eq:{label}")
        if point is None:
            return CheckResult(
                "unproven",
                f"could not prove the equation's {side.source} equals {label} = {_fmt(target)}",
                offset=side.offset,
            )
        return CheckResult(
            "false",
            f"the equation shows {side.source} = {_fmt(e)}, but {label} is {_fmt(target)} "
            f"(they differ at {_point_text(point)})",
            offset=side.offset,
        )
    return CheckResult("ok", f"the equation shows {label}")


__all__ = [
    "CLAIM_KINDS",
    "CheckResult",
    "Claim",
    "ClaimError",
    "Context",
    "Written",
    "check_claim",
    "check_equation_latex",
    "check_number",
    "check_quiz_answer",
    "read_number",
    "show",
    "value_text",
]
