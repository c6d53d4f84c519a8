"""Orders of growth the reader sees, compared with the chapter's `order` claims.

An order is read wherever it is written: a lesson (`$O(T d^2)$`, `[O(T^2 d)]{claim=order-grid}`),
a figure's title, caption or alt text (tied by the figure's `claims:` map, order as written ->
claim id), and the `<text>` elements of an SVG figure (tied by `data-claim="..."`). Two orders
agree when they are the same power product up to a constant (`T^2 d` and `2 T^2 d`), or the
same expression (`\\log T` and `log(T)`); this is the meaning of Θ that `verify/order.py` decides
for order claims, restricted to what needs no sympy.

SVG is read with the standard library's expat parser with every DTD refused (no entity can be
declared, so none can expand) and within the loader's file-size cap.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import field
from fractions import Fraction
from functools import lru_cache, partial
from xml.parsers import expat

from coursekit.markdown import scan
from coursekit.markdown.numbers import Found, order_argument, orders
from coursekit.model.base import Location
from coursekit.model.tree import Chapter, Course
from coursekit.records import record
from coursekit.rules._items import Item, Where
from coursekit.rules._texts import yaml_locator
from coursekit.verify.exact import power_product, shown_product
from coursekit.verify.expr import FormulaError, parse_formula
from coursekit.verify.latex import parse_latex
from coursekit.verify.tree import BinOp, Call, Name, Neg, Node, Num

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_PLAIN_FUNCTIONS = re.compile(r"(?<![\\\w])(log|ln|exp|sqrt)(?![\w])")
_MAX_SVG_TEXTS = 2000


@record
class OrderBook:
    """The chapter's order claims: id -> (order as declared, its tree or None)."""

    claims: dict[str, tuple[str, Node | None]] = field(default_factory=dict)

    def add(self, claim_id: str, order: str, lesson: str) -> None:
        self.claims.setdefault(claim_id, (order, _declared_order(order)))


@lru_cache(maxsize=4096)
def _declared_order(order: str) -> Node | None:
    """An order claim's `order` as a tree (chapters share their orders: read each once)."""
    try:
        return parse_formula(order)
    except FormulaError:
        return None  # CK801 reports the claim


@lru_cache(maxsize=4096)
def read_order(text: str) -> Node:
    """The argument of an order as a tree: LaTeX (`T^2 d`) or plain text (`log T`, `T²`)."""
    argument = order_argument(text)
    argument = re.sub(r"([⁰¹²³⁴⁵⁶⁷⁸⁹]+)", r"^{\1}", argument).translate(_SUPERSCRIPTS)
    argument = _PLAIN_FUNCTIONS.sub(r"\\\1 ", argument).replace("·", r"\cdot ")
    return parse_latex(argument)


def agree(shown: Node, declared: Node) -> bool:
    a, b = _product(shown), _product(declared)
    if a is not None and b is not None:
        return a == b
    return _shape(shown) == _shape(declared)


@lru_cache(maxsize=4096)
def _product(node: Node) -> frozenset[tuple[str, Fraction]] | None:
    """`power_product` as a value: an untied order is compared with every claim of its chapter,
    and the trees come from the caches above, so each is read as a product once."""
    exponents = power_product(node)
    return None if exponents is None else frozenset(exponents.items())


def _shape(node: Node) -> object:
    """The tree without offsets or constant factors, for comparing non-products."""
    if isinstance(node, Num):
        return ("num", node.value)
    if isinstance(node, Name):
        return ("name", node.id)
    if isinstance(node, Neg):
        return _shape(node.operand)
    if isinstance(node, BinOp):
        if node.op == "*" and isinstance(node.left, Num):
            return _shape(node.right)
        return (node.op, _shape(node.left), _shape(node.right))
    if isinstance(node, Call):
        func = "log" if node.func == "ln" else node.func
        return (func, tuple(_shape(arg) for arg in node.args[:1]))
    return None


def _declared(order: str, node: Node | None) -> str:
    exps = power_product(node) if node is not None else None
    return shown_product(exps) if exps is not None else order


def judge_order(
    chapter: str,
    found: Found,
    where: Where,
    book: OrderBook,
    span: tuple[str, int, int] | None,
    claim: str | None = None,
) -> Item:
    claim = claim or found.claim
    text = found.text
    try:
        shown = read_order(text)
    except FormulaError as exc:
        why = f"order {text} cannot be read ({exc.message}), so nothing checks it"
        return Item(chapter, "orders", "unreadable", where, text, "CK822", why)
    if claim is not None:
        entry = book.claims.get(claim)
        if entry is None:
            known = ", ".join(sorted(book.claims)) or "none"
            why = f"order {text} is tied to '{claim}', which is no order claim of chapter "
            why += f"{chapter} (order claims: {known})"
            return Item(chapter, "orders", "false", where, text, "CK821", why)
        order, node = entry
        if node is not None and agree(shown, node):
            return Item(chapter, "orders", "checked", where, text, claim=claim)
        why = f"order {text} disagrees with claim '{claim}', which is Θ({_declared(order, node)})"
        return Item(chapter, "orders", "false", where, text, "CK821", why, claim)
    matches = [c for c, (_, node) in book.claims.items() if node is not None and agree(shown, node)]
    if len(matches) == 1:
        why = f"it matches claim '{matches[0]}'" + (
            ": coursekit fix ties it" if span is not None else ": tie it"
        )
        return Item(
            chapter,
            "orders",
            "untied",
            where,
            text,
            "CK822",
            _UNTIED.format(text, why),
            matches[0],
            span,
        )
    why = (
        f"it matches {len(matches)} claims ({', '.join(matches)}): tie it to one"
        if matches
        else "no order claim of the chapter matches it: add one and tie it"
    )
    return Item(chapter, "orders", "untied", where, text, "CK822", _UNTIED.format(text, why))


_UNTIED = "order {} is tied to no claim; {}"


def figure_orders(
    course: Course, chapter: Chapter, book: OrderBook, cited: set[str]
) -> Iterator[Item]:
    """The orders of every figure: its title, caption and alt text, then its SVG's text.

    A key of the figure's `claims:` map is text as the figure writes it, the order alone
    (`O(T)`) or with its context (`Attention: $O(1)$`); every order inside an occurrence of
    the key is tied to the key's claim, and a key the texts no longer write is reported.
    """
    manifest = chapter.manifest
    for index, figure in enumerate(manifest.figures):
        cited.update(figure.claims.values())
        written: set[str] = set()
        for key in ("title", "caption", "alt"):
            value = getattr(figure, key)
            if not value:
                continue
            locate = yaml_locator(course, manifest, "figures", index, key)
            ties = _ties(value, figure.claims, written)
            for found in orders(scan(value)):
                claim = next((c for a, b, c in ties if a <= found.start and found.end <= b), None)
                yield judge_order(
                    chapter.id, found, partial(locate, found.start), book, None, claim
                )
        for phrase, claim in figure.claims.items():
            if phrase not in written:
                yield Item(
                    chapter.id,
                    "orders",
                    "false",
                    manifest.loc("figures", index, "claims", phrase),
                    phrase,
                    "CK821",
                    f"Fig. {figure.number} ties '{phrase}' to '{claim}', but its title, caption "
                    "and alt text no longer write it",
                )
        if figure.asset.endswith(".svg"):
            path = posixpath.normpath(f"{chapter.dir}/{figure.asset}")
            text = course.texts.get(path)
            if text is not None:
                yield from _svg_orders(chapter.id, path, text, book, cited)


def _ties(text: str, claims: dict[str, str], written: set[str]) -> list[tuple[int, int, str]]:
    """(start, end, claim) of every occurrence in `text` of a key of a figure's `claims:`."""
    ties: list[tuple[int, int, str]] = []
    for phrase, claim in claims.items():
        at = text.find(phrase) if phrase else -1
        while at >= 0:
            written.add(phrase)
            ties.append((at, at + len(phrase), claim))
            at = text.find(phrase, at + 1)
    return ties


def _svg_orders(
    chapter: str, path: str, text: str, book: OrderBook, cited: set[str]
) -> Iterator[Item]:
    try:
        texts = svg_texts(text)
    except ValueError as exc:
        yield Item(
            chapter,
            "orders",
            "unreadable",
            Location(path, 1, 1),
            path,
            "CK822",
            f"{posixpath.basename(path)} cannot be read for its orders of growth: {exc}",
        )
        return
    for line, column, content, claim in texts:
        if claim:
            cited.add(claim)
        for found in orders(scan(content)):
            yield judge_order(chapter, found, Location(path, line, column), book, None, claim)


def svg_texts(text: str) -> list[tuple[int, int, str, str | None]]:
    """(line, column, text, data-claim) of each `<text>` element, or ValueError."""
    parser = expat.ParserCreate()
    found: list[tuple[int, int, str, str | None]] = []
    stack: list[tuple[int, int, list[str], str | None]] = []

    def refuse(*_args: object) -> None:
        raise ValueError("a DOCTYPE or entity declaration is refused in an SVG figure")

    def start(name: str, attrs: dict[str, str]) -> None:
        if name.rsplit(":", 1)[-1] == "text" or (stack and name.endswith("tspan")):
            claim = attrs.get("data-claim") or (stack[-1][3] if stack else None)
            line, column = parser.CurrentLineNumber, parser.CurrentColumnNumber + 1
            stack.append((line, column, [], claim))

    def end(name: str) -> None:
        if stack and (name.rsplit(":", 1)[-1] == "text" or name.endswith("tspan")):
            line, column, parts, claim = stack.pop()
            if stack:
                stack[-1][2].extend(parts)
                if claim != stack[-1][3]:
                    found.append((line, column, "".join(parts), claim))
                    stack[-1][2].clear()
            else:
                found.append((line, column, "".join(parts), claim))
            if len(found) > _MAX_SVG_TEXTS:
                raise ValueError(f"more than {_MAX_SVG_TEXTS} text elements")

    def data(content: str) -> None:
        if stack:
            stack[-1][2].append(content)

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise ValueError(
            f"not well-formed XML ({expat.errors.messages.get(exc.code, exc)})"
        ) from None
    return found
