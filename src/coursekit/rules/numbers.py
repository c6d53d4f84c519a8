"""Numbers, displays and orders (CK814-CK822): everything the reader sees is accounted for.

Every number a reader sees in a lesson is *checked* (tied to a claim, `[26,214,400]{claim=rec-t50}`,
or part of arithmetic the text asserts, `$2\\cdot 50\\cdot 512^2 = 26{,}214{,}400$` or
`$2\\cdot 50\\cdot 512^2$, which is 26,214,400`, evaluated exactly), a *given* (a value of some
claim's `where`, a quiz answer, or the lesson's `given:` list), or reported here. Years, ids
(`II.2`, `Prop. 1`, `Fig. 2`), list and heading numbers, code, link texts and quoted titles are
never numbers to check; nor is a small plain number (`3`, `50`) that looks like no result.

Display equations without a label are checked when they read: arithmetic exactly, a definition
(`S = QK^\\top`) is given, an identity in symbols by sympy (the formulas family). Orders of
growth (`O(...)`, `Θ(...)`, `\\Theta`, `\\mathcal{O}`) in lessons, figure texts and SVG `<text>`
are compared with the chapter's `order` claims. See `coursekit check --statistics` for the account.
"""

from __future__ import annotations

from collections.abc import Iterator

from coursekit.diagnostics import Severity
from coursekit.rules._displays import settled
from coursekit.rules.base import Context, Finding, rule
from coursekit.rules.facts import INHERITED_NOTATION

# A chapter's findings read its own files and the notation its lessons inherit (assumptions,
# shapes), which sympy's judgements depend on.
NOTATION = INHERITED_NOTATION


def _report(ctx: Context, code: str) -> Iterator[Finding]:
    for item in settled(ctx):  # an identity in symbols: sympy decides, when formulas are on
        if item.code == code:
            yield Finding(item.location, item.message)


@rule("CK814", "number-near-claim", per_chapter=NOTATION)
def number_near_claim(ctx: Context) -> Iterator[Finding]:
    """An untied number is within 10% of a claim's value but differs: a slip of that claim.

    Fails:
        The recurrence costs 26,214,401 multiplications.   # rec-t50 computes 26,214,400
    Passes:
        The recurrence costs [26,214,400]{claim=rec-t50} multiplications.
    """
    yield from _report(ctx, "CK814")


@rule("CK815", "number-untied-equal", Severity.WARNING, fixable=True, per_chapter=NOTATION)
def number_untied_equal(ctx: Context) -> Iterator[Finding]:
    """An untied number equals a claim's value: tie it, so a change to either is caught.

    `coursekit fix` writes the tag around the number.

    Fails:
        The recurrence costs 26,214,400 multiplications.
    Passes:
        The recurrence costs [26,214,400]{claim=rec-t50} multiplications.
    """
    for item in settled(ctx):
        if item.code == "CK815":
            yield Finding(item.location, item.message, fixable=item.span is not None)


@rule("CK816", "number-untied", Severity.WARNING, per_chapter=NOTATION)
def number_untied(ctx: Context) -> Iterator[Finding]:
    """A number that looks derived (separators, decimals, three significant digits) is unchecked.

    Tie it to a claim, or list it under `given:` in the lesson's front matter when it is an
    input the lesson chooses rather than a result.

    Fails:
        A layer holds 1,048,576 weights.
    Passes:
        given: [1048576]
        ...
        A layer holds 1,048,576 weights.
    """
    yield from _report(ctx, "CK816")


@rule("CK817", "claim-uncited", Severity.WARNING, per_chapter=NOTATION)
def claim_uncited(ctx: Context) -> Iterator[Finding]:
    """A value or order claim is shown nowhere: no tag, quiz answer or figure cites it.

    Fails:
        claims: [{id: rec-t50, kind: value, expr: recurrence, where: {T: 50}, value: 26214400}]
        ...
        The recurrence costs 26,214,400 multiplications.
    Passes:
        The recurrence costs [26,214,400]{claim=rec-t50} multiplications.
    """
    yield from _report(ctx, "CK817")


@rule("CK818", "arithmetic-false", per_chapter=NOTATION)
def arithmetic_false(ctx: Context) -> Iterator[Finding]:
    """Arithmetic in the text is false, evaluated exactly.

    An inline equation of numbers, or inline arithmetic followed by the number it makes
    ("which is", "=", "≈"; an `≈` allows the rounding of the digits written).

    Fails:
        The recurrence costs $2 \\cdot 50 \\cdot 512^3$, which is [26,214,400]{claim=rec-t50}.
    Passes:
        The recurrence costs $2 \\cdot 50 \\cdot 512^2$, which is [26,214,400]{claim=rec-t50}.
    """
    yield from _report(ctx, "CK818")


@rule("CK819", "display-false", per_chapter=NOTATION)
def display_false(ctx: Context) -> Iterator[Finding]:
    """A display equation without a label is false.

    Arithmetic is evaluated exactly; an identity in symbols is checked by sympy under the
    lesson's assumptions (with formulas on).

    Fails:
        $$\\frac{2T^2 d}{2T d^2} = \\frac{d}{T}$$
    Passes:
        $$\\frac{2T^2 d}{2T d^2} = \\frac{T}{d}$$
    """
    yield from _report(ctx, "CK819")


@rule("CK820", "display-unverified", Severity.WARNING, per_chapter=NOTATION)
def display_unverified(ctx: Context) -> Iterator[Finding]:
    """A display equation without a label cannot be read, so nothing checks it.

    Label it with the formula it shows (`{#eq:NAME}`), or write it in the subset the LaTeX
    reader reads (`coursekit explain CK802`). A definition (`S = QK^\\top`) needs no check.

    Fails:
        $$T\\,(d_h^2 + d_h d_x) \\approx T d^2$$
    Passes:
        $$T\\,(d_h^2 + d_h d_x)$$ {#eq:recurrence}
    """
    yield from _report(ctx, "CK820")


@rule("CK821", "order-mismatch", per_chapter=NOTATION)
def order_mismatch(ctx: Context) -> Iterator[Finding]:
    """An order of growth tied to a claim disagrees with it (or the claim is no order claim).

    Fails:
        The grid is [$O(T d^2)$]{claim=order-grid}.   # order-grid: order T**2*d
    Passes:
        The grid is [$O(T^2 d)$]{claim=order-grid}.
    """
    yield from _report(ctx, "CK821")


@rule("CK822", "order-untied", Severity.WARNING, fixable=True, per_chapter=NOTATION)
def order_untied(ctx: Context) -> Iterator[Finding]:
    """An order of growth is tied to no claim (fixable when exactly one order claim matches).

    In a lesson, tie it with a tag; in a figure's caption or alt text, with the figure's
    `claims:` map; in an SVG, with `data-claim="ID"` on its `<text>` element.

    Fails:
        The grid costs $O(T^2 d)$.
    Passes:
        The grid costs [$O(T^2 d)$]{claim=order-grid}.
    """
    for item in settled(ctx):
        if item.code == "CK822":
            yield Finding(item.location, item.message, fixable=item.span is not None)
