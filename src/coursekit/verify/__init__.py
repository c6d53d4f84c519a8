"""coursekit.verify: the pure verification engine for derived formulas.

It knows nothing of the rest of coursekit but two modules below it (``latex_macros``; ``lazy``, which
makes its names import when first asked for).  Importing it does not import sympy: sympy is loaded
only by the functions that need it (and, for :func:`verify_document`, once in the parent before
the worker processes are forked).

Public API:

* :class:`MathsSpec`, :class:`Verdict`, :func:`verify_document` (:func:`verify_documents` for
  many at once, across cores) -- check a whole document, each
  sympy job under a time limit in a forked worker (``runner``);
* :class:`Claim`, :class:`Context`, :func:`check_claim`, :func:`check_equation_latex`,
  :func:`check_number`, :func:`check_quiz_answer`, :class:`CheckResult` (``claims``);
* :func:`parse_formula`, :func:`parse_formulas`, :class:`FormulaError`, :class:`Limits`
  (``expr``: the whitelisting parser of Python-syntax formulas);
* :func:`parse_latex`, :func:`parse_latex_sides` (``latex``: the reader's LaTeX).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coursekit.lazy import exports

if TYPE_CHECKING:
    from coursekit.verify.claims import (
        CLAIM_KINDS,
        CheckResult,
        Claim,
        ClaimError,
        Context,
        check_claim,
        check_equation_latex,
        check_number,
        check_quiz_answer,
        read_number,
    )
    from coursekit.verify.declared import parse_formulas
    from coursekit.verify.expr import FormulaError, Limits, parse_formula
    from coursekit.verify.latex import parse_latex, parse_latex_sides
    from coursekit.verify.runner import (
        DEFAULT_TIMEOUT,
        MathsSpec,
        Verdict,
        verify_document,
        verify_documents,
    )

# Each public name and the module it lives in: imported when first asked for, so that a
# run needing one table (a status, a type) does not import the whole package.
_HOMES = {
    "CLAIM_KINDS": "coursekit.verify.claims",
    "CheckResult": "coursekit.verify.claims",
    "Claim": "coursekit.verify.claims",
    "ClaimError": "coursekit.verify.claims",
    "Context": "coursekit.verify.claims",
    "check_claim": "coursekit.verify.claims",
    "check_equation_latex": "coursekit.verify.claims",
    "check_number": "coursekit.verify.claims",
    "check_quiz_answer": "coursekit.verify.claims",
    "read_number": "coursekit.verify.claims",
    "parse_formulas": "coursekit.verify.declared",
    "FormulaError": "coursekit.verify.expr",
    "Limits": "coursekit.verify.expr",
    "parse_formula": "coursekit.verify.expr",
    "parse_latex": "coursekit.verify.latex",
    "parse_latex_sides": "coursekit.verify.latex",
    "DEFAULT_TIMEOUT": "coursekit.verify.runner",
    "MathsSpec": "coursekit.verify.runner",
    "Verdict": "coursekit.verify.runner",
    "verify_document": "coursekit.verify.runner",
    "verify_documents": "coursekit.verify.runner",
}

__all__ = [
    "CLAIM_KINDS",
    "DEFAULT_TIMEOUT",
    "CheckResult",
    "Claim",
    "ClaimError",
    "Context",
    "FormulaError",
    "Limits",
    "MathsSpec",
    "Verdict",
    "check_claim",
    "check_equation_latex",
    "check_number",
    "check_quiz_answer",
    "parse_formula",
    "parse_formulas",
    "parse_latex",
    "parse_latex_sides",
    "read_number",
    "verify_document",
    "verify_documents",
]


__getattr__ = exports(__name__, _HOMES)
