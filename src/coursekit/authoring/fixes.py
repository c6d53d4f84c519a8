"""`coursekit fix`: the safe fixes, planned as a `Changeset` (nothing here writes).

A fix is safe when the right answer is derivable from the tree and no reader-visible meaning
moves:

- **renumber propositions / figures** 1..n in their current order, updating `prop:N` /
  `fig:N` links, `prop:II.2/N` links from other chapters, "Prop. N" / "Fig. N" mentions in the
  chapter's lessons, "II.2 Prop. N" mentions anywhere, and the chapter's problems' and
  exercises' `supports` lists. Skipped (with a note) when any reference is ambiguous: it names
  a number used twice, or a number that names nothing today but would name something after.
- **book and chapter ids** that disagree with their folder (the book's list and the folder
  agree, so the manifest's own `id` is the odd one out).
- **ties**: an untied number equal to a claim's value (CK815), or an untied order of growth
  that exactly one order claim matches (CK822), in a lesson, gets its tag:
  `26,214,400` -> `[26,214,400]{claim=rec-t50}`. Nothing else on the line moves.

Nothing else is reordered. Files with YAML errors (CK101/CK102) are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from coursekit import codes
from coursekit.authoring.changes import Changeset
from coursekit.authoring.yamledit import EditError, YamlEditor
from coursekit.bounds import ref_number
from coursekit.config import Config
from coursekit.load import LoadResult
from coursekit.markdown import scan
from coursekit.model.tree import Chapter, Course, ExerciseDoc, Problem
from coursekit.records import record

BROKEN = {codes.YAML_SYNTAX, codes.UNREADABLE}
_CH = r"(?:0|[IVXLC]+)\.[1-9][0-9]*"


@record(frozen=True)
class _Kind:
    field: str  # chapter.yaml key
    scheme: str  # link scheme: prop / fig
    words: str  # regex alternation of the words that mention one
    label: str  # for notes
    supports: bool  # problems' and exercises' `supports` name these


PROPS = _Kind("propositions", "prop", r"Prop\.|Proposition|Props\.", "propositions", True)
FIGS = _Kind("figures", "fig", r"Fig\.|Figure|Figs\.", "figures", False)


@record
class _Ref:
    path: str
    start: int  # offset of the number in the text
    end: int
    number: int
    line: int


class Fixer:
    def __init__(
        self,
        root: Path,
        loaded: LoadResult,
        config: Config,
        paths: Sequence[str] = (),
        enabled: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = root
        self.loaded = loaded
        self.config = config
        self.paths = [p.rstrip("/") for p in paths]
        self.enabled = enabled or (lambda _fixer: True)
        self.changes = Changeset(root)
        self.fixed = 0  # findings repaired

    @property
    def course(self) -> Course:
        return self.loaded.course

    def note(self, text: str) -> None:
        self.changes.notes.append(text)

    # Files ---------------------------------------------------------------------------------

    def broken(self, rel: str) -> bool:
        return any(d.path == rel and d.code in BROKEN for d in self.loaded.diagnostics)

    def text(self, rel: str) -> str | None:
        path = (self.root / rel).absolute()
        planned = self.changes.current(path)
        return planned if planned is not None else self.course.texts.get(rel)

    def put(self, rel: str, new: str) -> None:
        original = self.course.texts.get(rel)
        if original is None:
            return
        self.changes.update((self.root / rel).absolute(), original, new)

    def selected(self, folder: str) -> bool:
        if not self.paths:
            return True
        return any(
            p in ("", ".")
            or folder == p
            or folder.startswith(p + "/")
            or p.startswith(folder + "/")
            for p in self.paths
        )

    def edit_yaml(self, rel: str, edit: Callable[[YamlEditor], None]) -> bool:
        if self.broken(rel):
            self.note(f"{rel}: has YAML errors; not rewritten")
            return False
        text = self.text(rel)
        if text is None:
            return False
        try:
            editor = YamlEditor(text, rel)
            edit(editor)
        except EditError as exc:
            self.note(f"{rel}: not fixed: {exc}")
            return False
        self.put(rel, editor.text)
        return True

    # The fixes -----------------------------------------------------------------------------

    def run(self) -> Changeset:
        if self.enabled("id-misplaced"):
            self.fix_ids()
        for chapter in self.course.chapters.values():
            if not self.selected(chapter.dir):
                continue
            if self.enabled("propositions"):
                self.renumber(chapter, PROPS)
            if self.enabled("figures"):
                self.renumber(chapter, FIGS)
        if self.enabled("numbers"):
            self.tie_to_claims()
        return self.changes

    def tie_to_claims(self) -> None:
        """Tag each untied number or order that one claim accounts for (CK815, CK822)."""
        from coursekit.rules._accounting import account

        ties: dict[str, list[tuple[int, int, str]]] = {}
        for item in account(self.course):
            if item.code in ("CK815", "CK822") and item.claim and item.span is not None:
                path, start, end = item.span
                ties.setdefault(path, []).append((start, end, item.claim))
        lessons = {
            lesson.path: (chapter, lesson)
            for chapter in self.course.chapters.values()
            for lesson in chapter.lessons.values()
        }
        for path, spans in ties.items():
            chapter, lesson = lessons[path]
            text = self.text(path)
            if not self.selected(chapter.dir) or text is None or self.broken(path):
                continue
            body = _body_offset(text, lesson.body_line)
            if text[body : body + len(lesson.body)] != lesson.body:
                self.note(f"{path}: changed since it was read; numbers not tied")
                continue
            for start, end, claim in sorted(spans, reverse=True):
                shown = text[body + start : body + end]
                text = f"{text[: body + start]}[{shown}]{{claim={claim}}}{text[body + end :]}"
                self.fixed += 1
            self.put(path, text)

    def canonical_id(self, chapter: Chapter) -> str:
        """The id the folder and the book's list agree on (else the manifest's own)."""
        number = chapter.dir.rsplit("/", 1)[-1].split("-", 1)[0]
        expected = f"{chapter.book_id}.{number}"
        book = self.course.books.get(chapter.book_id)
        if number.isdigit() and book is not None and expected in book.manifest.chapters:
            return expected
        return chapter.manifest.id

    def fix_ids(self) -> None:
        for book_id, book in self.course.books.items():
            if (
                book.manifest.id != book_id
                and self.selected(book.dir)
                and self.edit_yaml(book.path, _set_id(book_id))
            ):
                self.fixed += 1
        for chapter in self.course.chapters.values():
            if not self.selected(chapter.dir):
                continue
            folder = chapter.dir.rsplit("/", 1)[-1]
            number = folder.split("-", 1)[0]
            expected = f"{chapter.book_id}.{number}"
            if not number.isdigit() or chapter.manifest.id == expected:
                continue
            owner = self.course.books.get(chapter.book_id)
            if owner is None or expected not in owner.manifest.chapters:
                self.note(
                    f"{chapter.path}: id '{chapter.manifest.id}' disagrees with its folder, "
                    f"but book {chapter.book_id} does not list '{expected}'; not fixed"
                )
                continue
            if self.edit_yaml(chapter.path, _set_id(expected)):
                self.fixed += 1

    def renumber(self, chapter: Chapter, kind: _Kind) -> None:
        entries = getattr(chapter.manifest, kind.field)
        old = [entry.number for entry in entries]
        new = list(range(1, len(old) + 1))
        if old == new:
            return
        refs = list(self.references(chapter, kind))
        why_not = self.renumber_refused(refs, old, new)
        if why_not is not None:
            self.note(f"{chapter.path}: {kind.label} not renumbered: {why_not}")
            return
        mapping = {o: n for o, n in zip(old, new, strict=True)}

        def edit(editor: YamlEditor) -> None:
            for index, number in enumerate(new):
                editor.set_scalar((kind.field, index, "number"), number)

        if not self.edit_yaml(chapter.path, edit):
            return
        self.fixed += sum(1 for o, n in mapping.items() if o != n)
        self.rewrite_references(refs, mapping)
        if kind.supports:
            self.fix_supports(chapter, mapping)

    def renumber_refused(self, refs: list[_Ref], old: list[int], new: list[int]) -> str | None:
        """Why renumbering would be unsafe (a reference it cannot map, a referrer it cannot
        edit), or None."""
        for ref in refs:
            if old.count(ref.number) > 1 or (ref.number not in old and ref.number in new):
                return f"the reference to {ref.number} at {ref.path}:{ref.line} would be ambiguous"
        for path in {ref.path for ref in refs}:
            if self.broken(path):
                return f"{path} refers to them and has YAML errors"
        return None

    def rewrite_references(self, refs: list[_Ref], mapping: dict[int, int]) -> None:
        """Each prose reference to a renumbered entry, rewritten in place (last first, so the
        earlier offsets stay valid)."""
        by_path: dict[str, list[_Ref]] = {}
        for ref in refs:
            if ref.number in mapping and mapping[ref.number] != ref.number:
                by_path.setdefault(ref.path, []).append(ref)
        for path, found in by_path.items():
            if path.endswith((".yaml", ".yml")):
                continue  # `supports` lists: fix_supports
            text = self.text(path)
            if text is None:
                continue
            for ref in sorted(found, key=lambda r: r.start, reverse=True):
                text = text[: ref.start] + str(mapping[ref.number]) + text[ref.end :]
            self.put(path, text)

    def fix_supports(self, chapter: Chapter, mapping: dict[int, int]) -> None:
        docs: list[Problem | ExerciseDoc] = [
            *chapter.problems.values(),
            *chapter.exercises.values(),
        ]
        for doc in docs:
            supports = doc.meta.supports
            if all(mapping.get(n, n) == n for n in supports):
                continue

            def edit(editor: YamlEditor, values: list[int] = supports) -> None:
                for index, number in enumerate(values):
                    editor.set_scalar(("supports", index), mapping.get(number, number))

            self.edit_yaml(doc.path, edit)

    # References ----------------------------------------------------------------------------

    def references(self, chapter: Chapter, kind: _Kind) -> Iterable[_Ref]:
        """Every place that names one of this chapter's propositions (or figures) by number."""
        lessons_dir = chapter.dir + "/lessons/"
        for path, text in sorted(self.course.texts.items()):
            if not path.endswith(".md"):
                continue
            own = path.startswith(lessons_dir)
            yield from _scan(path, text, self.canonical_id(chapter), own, kind)
        if kind.supports:
            docs: list[Problem | ExerciseDoc] = [
                *chapter.problems.values(),
                *chapter.exercises.values(),
            ]
            for doc in docs:
                for index, number in enumerate(doc.meta.supports):
                    loc = doc.meta.loc("supports", index)
                    yield _Ref(doc.path, -1, -1, number, loc.line)


def _body_offset(text: str, line: int) -> int:
    """Offset of the start of 1-based `line` in `text`."""
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", offset) + 1
    return offset


def _set_id(value: str) -> Callable[[YamlEditor], None]:
    def edit(editor: YamlEditor) -> None:
        editor.set_scalar(("id",), value)

    return edit


def _scan(path: str, text: str, chapter_id: str, own: bool, kind: _Kind) -> Iterable[_Ref]:
    # The body as every rule reads it: code and comments blanked, so a fix never renumbers
    # an example shown as code.
    scanned = scan(text, with_front_matter=True)
    start = scanned.body_start
    body = scanned.masked[start:]
    link = re.compile(rf"\]\({kind.scheme}:(?:(?P<ch>{_CH})/)?(?P<n>[0-9]+)\)")
    mention = re.compile(
        rf"(?:(?P<pre>{_CH})(?:'s)?\s+)?(?:{kind.words})\s+(?P<n>[0-9]+)\b"
        rf"(?:(?P<post>\s+(?:of|in)\s+(?:Chapter\s+)?(?P<ch2>{_CH}))|(?P<ext>\s+of\s))?"
    )
    for match in link.finditer(body):
        target = match["ch"]
        if (target is None and own) or target == chapter_id:
            yield _ref(path, text, start + match.start("n"), start + match.end("n"), match["n"])
    for match in mention.finditer(body):
        if match["ext"] and not match["pre"]:
            continue  # "Figure 1 of the paper": not ours
        target = match["pre"] or match["ch2"]
        if (target is None and own) or target == chapter_id:
            yield _ref(path, text, start + match.start("n"), start + match.end("n"), match["n"])


def _ref(path: str, text: str, begin: int, end: int, number: str) -> _Ref:
    value = ref_number(number)  # None: longer than any count, so it names nothing to renumber
    return _Ref(path, begin, end, -1 if value is None else value, text.count("\n", 0, begin) + 1)


def fixer_switch(config: Config) -> Callable[[str], bool]:
    """Whether a fix may run: its rule (found by name or family among fixable rules) is enabled.

    A fix whose rule is not registered (yet) runs: the fix is safe on its own.
    """
    from coursekit.rules import REGISTRY

    def switch(fixer: str) -> bool:
        stem = fixer.rstrip("s")
        rules = [
            rule
            for rule in REGISTRY.values()
            if rule.name == fixer or (rule.fixable and (rule.family == fixer or stem in rule.name))
        ]
        return not rules or any(config.selects(rule.code, rule.name) for rule in rules)

    return switch
