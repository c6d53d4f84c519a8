"""Completion: link targets after a scheme, symbols in maths, claim ids, rule codes."""

from __future__ import annotations

import re

from lsprotocol import types

from coursekit.latex_symbols import shown
from coursekit.lsp.targets import notation_tables
from coursekit.model.tree import Chapter, Course

_AFTER_SCHEME = re.compile(
    r"\b(?P<scheme>lesson|chapter|fig|prop|apparatus|eq):(?P<typed>[^\s)\]\"'`,}]*)$"
)
_AFTER_CLAIM = re.compile(r"(?:\{claim=|\bclaim:\s*)(?P<typed>[A-Za-z0-9_.-]*)$")
_IN_SUPPRESSION = re.compile(
    r"coursekit:\s*ignore(?:-start)?\[(?:[^\]]*[,\s])?(?P<typed>[A-Za-z0-9-]*)$"
)
_EQ_LABEL = re.compile(r"\{#eq:(?P<label>[^}\s]+)\}")


def _item(label: str, detail: str, kind: types.CompletionItemKind) -> types.CompletionItem:
    return types.CompletionItem(label=label, detail=detail, kind=kind)


def complete(
    text: str, offset: int, course: Course, chapter: Chapter | None
) -> list[types.CompletionItem]:
    """What may be typed at `offset` (before the cursor decides the context)."""
    line = text[text.rfind("\n", 0, offset) + 1 : offset]
    match = _AFTER_SCHEME.search(line)
    if match is not None:
        return _targets(match["scheme"], course, chapter)
    if _IN_SUPPRESSION.search(line):
        return _codes()
    if _AFTER_CLAIM.search(line):
        return _claims(course, chapter)
    if _in_maths(text, offset):
        return _symbols(course, chapter)
    return []


def _targets(scheme: str, course: Course, chapter: Chapter | None) -> list[types.CompletionItem]:
    ref = types.CompletionItemKind.Reference
    if scheme == "apparatus":
        return [_item(e.id, e.title, ref) for e in course.apparatus.values()]
    if scheme == "chapter":
        return [
            _item(c.id, c.manifest.title, types.CompletionItemKind.Module)
            for c in course.chapters.values()
        ]
    items: list[types.CompletionItem] = []
    if scheme == "lesson":
        for owner in course.chapters.values():
            for item in owner.manifest.items:
                lesson = owner.lessons.get(item.id)
                title = lesson.meta.title if lesson else f"{item.title} (planned)"
                items.append(
                    _item(f"{owner.id}/{item.id}", title or "", types.CompletionItemKind.File)
                )
                if owner is chapter:
                    items.append(_item(item.id, title or "", types.CompletionItemKind.File))
        return items
    if scheme in ("fig", "prop"):
        for owner in course.chapters.values():
            numbered = (
                [(f.number, f.title) for f in owner.manifest.figures]
                if scheme == "fig"
                else [(p.number, p.claim) for p in owner.manifest.propositions]
            )
            for number, title in numbered:
                items.append(_item(f"{owner.id}/{number}", title, ref))
                if owner is chapter:
                    items.append(_item(str(number), title, ref))
        return items
    if scheme == "eq" and chapter is not None:
        for lesson in chapter.lessons.values():
            for found in _EQ_LABEL.finditer(lesson.body):
                items.append(_item(found["label"], lesson.ref, ref))
    return items


def _codes() -> list[types.CompletionItem]:
    from coursekit.rules import REGISTRY

    kind = types.CompletionItemKind.EnumMember
    return [_item(rule.code, f"{rule.name}: {rule.summary}", kind) for rule in REGISTRY.values()]


def _claims(course: Course, chapter: Chapter | None) -> list[types.CompletionItem]:
    owners = [chapter] if chapter is not None else list(course.chapters.values())
    return [
        _item(claim.id, f"{claim.kind} ({lesson.ref})", types.CompletionItemKind.Value)
        for owner in owners
        for lesson in owner.lessons.values()
        for claim in lesson.meta.claims
    ]


def _in_maths(text: str, offset: int) -> bool:
    """An odd number of unescaped `$` before the cursor on this paragraph: inside maths."""
    paragraph = text.rfind("\n\n", 0, offset)
    before = text[paragraph + 1 : offset]
    return len(re.findall(r"(?<!\\)\$", before.replace("$$", "$"))) % 2 == 1


def _symbols(course: Course, chapter: Chapter | None) -> list[types.CompletionItem]:
    seen: set[str] = set()
    items: list[types.CompletionItem] = []
    for owner, entries in notation_tables(course, chapter):
        for entry in entries:
            if entry.symbol in seen:
                continue
            seen.add(entry.symbol)
            items.append(
                _item(
                    shown(entry.symbol),
                    f"{entry.meaning} ({owner})",
                    types.CompletionItemKind.Variable,
                )
            )
    return items
