"""Number reading: numbers as written in the prose (digits, number words, "about ..."), checked
against exact values, and exact values shown back to the author.

Pure Python; does not import sympy.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from coursekit.records import record
from coursekit.verify.claims.model import (
    CheckResult,
)


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


@record(frozen=True)
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
