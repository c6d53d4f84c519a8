"""Code actions: every fix `coursekit fix` knows, and "add this symbol to the notation"."""

from __future__ import annotations

import re

from lsprotocol import types

from coursekit.authoring.fixes import Fixer, fixer_switch
from coursekit.authoring.yamledit import EditError, YamlEditor
from coursekit.load import LoadResult
from coursekit.lsp.positions import lines
from coursekit.lsp.state import CourseState
from coursekit.model.tree import Chapter

UNDECLARED = "CK204"
_UNDECLARED_SYMBOL = re.compile(r"^'(?P<symbol>[^']+)' is not declared for ")


def _replace_all(old: str, new: str) -> types.TextEdit:
    """One edit replacing the whole text (the editor diffs it; positions stay exact)."""
    old_lines = lines(old)
    end = types.Position(len(old_lines) - 1, len(old_lines[-1].encode("utf-16-le")) // 2)
    return types.TextEdit(types.Range(types.Position(0, 0), end), new)


def fix_actions(
    state: CourseState, rel: str, context: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """`coursekit fix` for the chapter of `rel`, as one workspace edit over every file it touches."""
    snapshot = state.snapshot
    chapter = state.chapter_of(rel)
    if snapshot is None or chapter is None:
        return []
    project = state.project
    loaded = LoadResult(snapshot.course, list(snapshot.result.diagnostics))
    fixer = Fixer(project.root, loaded, project.config, [chapter.dir], fixer_switch(project.config))
    planned = fixer.run()
    changes = [change for change in planned.effective if change.old is not None]
    if not changes:
        # say why nothing is offered (an ambiguous reference, a file with YAML errors)
        return [
            types.CodeAction(
                title=f"coursekit fix: {note}",
                kind=types.CodeActionKind.QuickFix,
                disabled=types.CodeActionDisabled(reason=note),
            )
            for note in planned.notes
        ]
    edits: dict[str, list[types.TextEdit]] = {}
    for change in changes:
        assert change.old is not None
        edits[change.path.as_uri()] = [_replace_all(change.old, change.new)]
    touched = state.absolute(rel) in {change.path for change in changes}
    title = f"coursekit fix: repair {fixer.fixed} issue(s) in {chapter.id} ({len(edits)} file(s))"
    return [
        types.CodeAction(
            title=title,
            kind=(
                types.CodeActionKind.QuickFix
                if touched and context
                else types.CodeActionKind.SourceFixAll
            ),
            diagnostics=context if touched and context else None,
            edit=types.WorkspaceEdit(changes=edits),
            is_preferred=touched and bool(context),
        )
    ]


def notation_actions(
    state: CourseState, rel: str, context: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """For an undeclared symbol: add it to the chapter's notation table, meaning to be written."""
    chapter = state.chapter_of(rel)
    if chapter is None:
        return []
    actions: list[types.CodeAction] = []
    for diagnostic in context:
        if diagnostic.code != UNDECLARED:
            continue
        match = _UNDECLARED_SYMBOL.match(diagnostic.message)
        if match is None:
            continue
        action = _add_symbol(state, chapter, match["symbol"], diagnostic)
        if action is not None:
            actions.append(action)
    return actions


def _add_symbol(
    state: CourseState, chapter: Chapter, symbol: str, diagnostic: types.Diagnostic
) -> types.CodeAction | None:
    old = state.text(chapter.path)
    if old is None:
        return None
    entry = {"symbol": symbol, "meaning": f"TODO: what {symbol} means in {chapter.id}"}
    try:
        editor = YamlEditor(old, chapter.path)
        if "notation:" in old:
            editor.append(("notation",), entry)
        else:
            editor.set_scalar(("notation",), [entry])
        new = editor.text
    except EditError:
        return None
    uri = state.absolute(chapter.path).as_uri()
    return types.CodeAction(
        title=f"Add '{symbol}' to the notation of {chapter.id}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [_replace_all(old, new)]}),
    )
