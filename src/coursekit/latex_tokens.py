"""LaTeX maths read into tokens with pylatexenc's walker, and tokens written back canonically.

A token is a character, a macro, or a braced group (a macro's arguments become groups that
follow it). `coursekit.latex_symbols` reads symbols from these tokens; nothing here knows what a
symbol is.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pylatexenc.latexwalker import (
    LatexCharsNode,
    LatexCommentNode,
    LatexEnvironmentNode,
    LatexGroupNode,
    LatexMacroNode,
    LatexMathNode,
    LatexSpecialsNode,
    LatexWalker,
)

from coursekit.records import record


@record(frozen=True, slots=True)
class Tok:
    """One token of maths: a character, a macro, or a braced group of tokens."""

    kind: str  # "char" | "macro" | "group"
    text: str  # the character, or the macro's name without backslash
    pos: int
    children: tuple[Tok, ...] = ()


@lru_cache(maxsize=1)
def latex_context() -> Any:
    # Building pylatexenc's default macro database costs ~0.1 ms a walk: build it once.
    from pylatexenc.latexwalker import get_default_latex_context_db

    return get_default_latex_context_db()


def walk(text: str) -> list[object]:
    walker = LatexWalker(text, tolerant_parsing=True, latex_context=latex_context())
    nodes, _, _ = walker.get_latex_nodes()
    return [node for node in nodes if node is not None]


def tokens(nodes: list[object]) -> list[Tok]:
    toks: list[Tok] = []
    for node in nodes:
        if node is None or isinstance(node, LatexCommentNode):
            continue
        if isinstance(node, LatexCharsNode):
            toks.extend(Tok("char", ch, node.pos + i) for i, ch in enumerate(node.chars))
        elif isinstance(node, LatexMacroNode):
            toks.append(Tok("macro", node.macroname, node.pos))
            args = node.nodeargd.argnlist if node.nodeargd is not None else []
            for arg in args or []:
                if arg is not None:
                    toks.append(_as_group(arg))
        elif isinstance(node, LatexGroupNode):
            toks.append(_as_group(node))
        elif isinstance(node, LatexSpecialsNode):
            toks.append(Tok("char", node.specials_chars[:1] or " ", node.pos))
        elif isinstance(node, LatexEnvironmentNode | LatexMathNode):
            toks.extend(tokens(list(node.nodelist or [])))
    return toks


def _as_group(node: object) -> Tok:
    if isinstance(node, LatexGroupNode):
        return Tok("group", "", node.pos, tuple(tokens(list(node.nodelist or []))))
    # A one-token argument written without braces: `\hat p`, `\mathbf x`.
    inner = tokens([node])
    pos = getattr(node, "pos", 0) or 0
    return Tok("group", "", pos, tuple(tok for tok in inner if tok.text.strip()))


def canonical(toks: tuple[Tok, ...] | list[Tok]) -> str:
    """Tokens back to LaTeX without spaces (a space only where a macro meets a letter)."""
    out: list[str] = []
    for tok in toks:
        if tok.kind == "group":
            out.append("{" + canonical(tok.children) + "}")
        elif tok.kind == "macro":
            out.append("\\" + tok.text)
        elif not tok.text.isspace():
            if out and out[-1].startswith("\\") and out[-1][1:].isalpha() and tok.text.isalpha():
                out.append(" ")
            out.append(tok.text)
    return "".join(out)


def unbrace(text: str) -> str:
    while text.startswith("{") and text.endswith("}") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0
