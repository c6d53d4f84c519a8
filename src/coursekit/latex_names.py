"""How a symbol is spelled: its canonical key, how an author types it, and its formula name.

A symbol read from LaTeX (:mod:`coursekit.latex_symbols`) is a base and a subscript; here they
become the one spelling every rule compares (`W_{hh}`, `d_{k}`, `\\alpha_{ij}`), the spelling a
message shows (`d_k`), and the name formulas and the LaTeX reader use for it (`d_k`,
`mathbf_W_hh`). Whether a subscript names a symbol or indexes a family is decided against the
declared symbols in scope (:func:`is_index`). Nothing here walks LaTeX: these are pure
functions of text.
"""

from __future__ import annotations

import re
from itertools import pairwise

from coursekit.latex_macros import ACCENT_PREFIX, GREEK, INDEX_MACROS, STYLE_PREFIX, styled_name
from coursekit.latex_tokens import unbrace


def key_of(base: str, sub: str) -> str:
    """The canonical spelling compared everywhere: `W_{hh}`, `d_{k}`, `\\alpha_{ij}`, `T`."""
    return f"{base}_{{{sub}}}" if sub else base


def shown(key: str) -> str:
    """A key as an author would type it: `d_{k}` -> `d_k`, `W_{hh}` stays."""
    match = re.fullmatch(r"(.+)_\{(.)\}", key)
    return f"{match.group(1)}_{match.group(2)}" if match else key


def index_parts(sub: str) -> list[str]:
    """The letters and macros a subscript is made of (`t-1` -> ['t'], `ij` -> ['i', 'j'])."""
    return re.findall(r"\\[A-Za-z]+|[A-Za-z]", sub)


def is_index(sub: str, declared: set[str] | frozenset[str]) -> bool:
    """A subscript that indexes a family: digits, `+ - ,`, dots, and declared one-letter symbols."""
    if not sub:
        return False
    for part in re.findall(r"\\[A-Za-z]+|.", sub):
        if part.isdigit() or part in "+-,'" or part.lstrip("\\") in INDEX_MACROS:
            continue
        if part not in declared:
            return False
    return True


_UPRIGHT = frozenset({"mathrm", "operatorname", "mathit", "mathsf", "text", "textrm"})
_SUB_PART = re.compile(
    r"\\(?:text|mathrm)\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}|\\([A-Za-z]+)|([A-Za-z0-9])"
)


def formula_name(key: str) -> str | None:
    """The name formulas and the LaTeX reader use for a symbol key, or None if it has none.

    `d_{k}` -> `d_k`, `\\alpha_{ij}` -> `alpha_ij`, `\\mathbf{W}_{hh}` and `\\mathbf{W_{hh}}` ->
    `mathbf_W_hh`, `\\hat{\\mathbf{y}}` -> `hat_mathbf_y`, `\\mathrm{softmax}` -> `softmax`
    (the convention of `latex_macros.styled_name`); `h_{t-1}` (an index) -> None.
    """
    head, rest = _head_name(key.strip())
    if head is None:
        return None
    if not rest:
        return head
    sub = rest[1:] if rest.startswith("_") else None
    if sub is None:
        return None
    sub = unbrace(sub) if sub.startswith("{") else sub
    spelled = _sub_name(sub)
    return f"{head}_{spelled}" if spelled else None


def _head_name(text: str) -> tuple[str | None, str]:
    """The name of the symbol `text` starts with, and what follows it."""
    if text[:1].isascii() and text[:1].isalpha():
        return text[0], text[1:]
    match = re.match(r"\\([A-Za-z]+)\s*", text)
    if match is None:
        return None, text
    macro, rest = match.group(1), text[match.end() :]
    if macro in GREEK and macro != "pi":
        return ("lamda" if macro == "lambda" else macro), rest
    if macro in _UPRIGHT:
        inner = re.match(r"\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}", rest)
        return (inner.group(1), rest[inner.end() :]) if inner else (None, rest)
    prefix = STYLE_PREFIX.get(macro) or ACCENT_PREFIX.get(macro)
    if prefix is None:
        return None, rest
    if rest.startswith("{"):
        depth, end = 0, 0
        for end, ch in enumerate(rest):  # noqa: B007 - `end` is where the group closes
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth == 0:
                break
        inner_text, rest = rest[1:end], rest[end + 1 :]
    else:
        inner_text, rest = rest, ""
    name = formula_name(inner_text) if inner_text.strip() else None
    if name is None and inner_text.strip().isdigit() and len(inner_text.strip()) == 1:
        name = inner_text.strip()
    if name is None:
        return None, rest
    return styled_name(prefix, name), rest


def _sub_name(sub: str) -> str | None:
    """A subscript that names (`hh`, `ij`, `\\text{model}`, `10`), spelled; None for an index."""
    parts: list[str] = []
    kinds: list[bool] = []  # is a digit
    pos = 0
    sub = sub.strip()
    while pos < len(sub):
        if sub[pos].isspace():
            pos += 1
            continue
        match = _SUB_PART.match(sub, pos)
        if match is None:
            return None
        word, macro, char = match.groups()
        if macro is not None and macro not in GREEK and macro not in {"max", "min"}:
            return None
        part = word or ("lamda" if macro == "lambda" else macro) or char
        parts.append(part)
        kinds.append(bool(char and char.isdigit()))
        pos = match.end()
    if not parts or any(a and not b for a, b in pairwise(kinds)):
        return None
    return "".join(parts)


__all__ = ["formula_name", "index_parts", "is_index", "key_of", "shown"]
