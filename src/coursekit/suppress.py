"""Inline suppressions and per-file ignores, applied to the diagnostics after the rules ran.

YAML (a manifest, or a lesson's front matter):

    title: Goodbye   # coursekit: ignore[CK301]        <- this line
    # coursekit: ignore[CK501, figure-alt-missing]     <- the next line and the block under it
    # coursekit: ignore-start[CK3]                     <- every line up to ignore-end
    # coursekit: ignore-end

Markdown (a lesson's body):

    text <!-- coursekit: ignore[CK201] -->             <- this line
    <!-- coursekit: ignore[CK201] -->                  <- alone on a line: the next line
    <!-- coursekit: ignore-start[CK2] --> ... <!-- coursekit: ignore-end -->

Only real comments are read: a `#` inside a YAML scalar (a folded block, a quoted string) is
text, and a Markdown comment is one the shared scanner (coursekit.markdown) finds outside code.
Codes are selected like everywhere else: a code, a prefix (`CK3`) or a rule name. Texts come
from the loaded course (`Course.texts`): no file is opened here. A suppression that suppresses
nothing is CK001; one that cannot be understood is CK002 (see rules/meta.py).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import field

from coursekit.codes import may_hold_directive
from coursekit.config import Config, selector_matches
from coursekit.diagnostics import Diagnostic, Severity
from coursekit.frontmatter import front_matter
from coursekit.load.yamlsafe import Span, comment_start
from coursekit.markdown import Comment, Scan, scan
from coursekit.memo import remembering
from coursekit.records import record

UNUSED = "CK001"
INVALID = "CK002"

_DIRECTIVE = r"coursekit:\s*(?P<kind>ignore-start|ignore-end|ignore)\b(?:\[(?P<codes>[^\]]*)\])?"
_YAML = re.compile(r"^#\s*" + _DIRECTIVE)
_HTML = re.compile(r"\s*" + _DIRECTIVE)  # a Markdown comment's body
_YAML_MENTION = re.compile(r"^#\s*coursekit:")
_HTML_MENTION = re.compile(r"\s*coursekit:")


@record
class Suppression:
    path: str
    line: int  # where the comment is (1-based)
    column: int
    selectors: tuple[str, ...]
    first: int  # lines covered, inclusive
    last: int
    used: set[str] = field(default_factory=set)  # selectors that suppressed something

    def covers(self, diagnostic: Diagnostic) -> str | None:
        if diagnostic.path != self.path or not self.first <= diagnostic.line <= self.last:
            return None
        for selector in self.selectors:
            if selector_matches(diagnostic.code, diagnostic.name, selector):
                return selector
        return None


def _rules() -> list[tuple[str, str]]:
    from coursekit.rules import REGISTRY

    return [(rule.code, rule.name) for rule in REGISTRY.values()]


def _rule_name(code: str) -> str:
    from coursekit.rules import REGISTRY

    rule = REGISTRY.get(code)
    return rule.name if rule else ""


# Parsing ------------------------------------------------------------------------------------


@record
class _Parsed:
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)


@record(frozen=True, slots=True)
class _Directive:
    index: int  # 0-based line of the comment
    column: int  # 1-based
    kind: str  # "ignore" | "ignore-start" | "ignore-end" | "invalid"
    codes: str | None
    alone: bool  # nothing else on its line(s)
    in_yaml: bool
    last_index: int  # 0-based line where the comment ends


def parse(path: str, text: str, rules: Sequence[tuple[str, str]] | None = None) -> _Parsed:
    """The suppressions written in one file, and CK002 for those that cannot be understood.

    Only real comments count: a YAML comment (not a `#` inside a scalar, such as a folded
    `problem: >-` block or a quoted string) and a Markdown comment (not one shown inside code).
    """
    known = list(rules) if rules is not None else _rules()
    result = _Parsed()
    if "coursekit:" not in text:
        return result
    lines = text.split("\n")
    open_blocks: list[Suppression] = []
    for found in _directives(path, text, lines):
        number = found.index + 1
        kind, column = found.kind, found.column
        selectors, problem = _selectors(found.codes, kind, known)
        if problem:
            result.problems.append(_problem(path, number, column, problem))
            if kind != "ignore-end":
                continue
        if kind == "ignore":
            first, last = number, found.last_index + 1
            if found.alone:
                target = _next_content(lines, found.last_index, found.in_yaml)
                if target is not None:
                    last = _block_end(lines, target) + 1 if found.in_yaml else target + 1
            result.suppressions.append(Suppression(path, number, column, selectors, first, last))
        elif kind == "ignore-start":
            block = Suppression(path, number, column, selectors, number, len(lines))
            open_blocks.append(block)
            result.suppressions.append(block)
        elif open_blocks:
            open_blocks.pop().last = number
        else:
            result.problems.append(
                _problem(path, number, column, "'ignore-end' without an 'ignore-start' before it")
            )
    for block in open_blocks:
        result.problems.append(
            _problem(
                path,
                block.line,
                block.column,
                "'ignore-start' is never closed by 'ignore-end' (it runs to the end of the file)",
            )
        )
    return result


def _directives(path: str, text: str, lines: list[str]) -> list[_Directive]:
    if not path.endswith(".md"):
        return _yaml_directives(lines, 0, len(lines))
    scanned = scan(text, with_front_matter=True)
    found: list[_Directive] = []
    fence = front_matter(text)
    if fence is not None:  # the YAML sits between the '---' lines
        found.extend(_yaml_directives(lines, 1, text.count("\n", 0, fence[0])))
    for comment in scanned.comments:
        directive = _markdown_directive(scanned, lines, comment)
        if directive is not None:
            found.append(directive)
    return sorted(found, key=lambda d: (d.index, d.column))


def _yaml_directives(lines: list[str], first: int, end: int) -> list[_Directive]:
    """Directives in the real comments of lines[first:end] (a YAML file or front matter)."""
    from coursekit.load.yamlparse import text_spans  # ruamel: only where a directive is

    scalars = text_spans("\n".join(lines[first:end]))
    found: list[_Directive] = []
    for index in range(first, end):
        line = lines[index].rstrip("\r")
        if "coursekit:" not in line:
            continue
        at = comment_start(line)
        if at is None or _inside(scalars, (index - first, at)):
            continue
        match = _YAML.match(line[at:])
        if match is not None:
            kind, codes = match["kind"], match["codes"]
        elif _YAML_MENTION.match(line[at:]):
            kind, codes = "invalid", None
        else:
            continue
        found.append(_Directive(index, at + 1, kind, codes, not line[:at].strip(), True, index))
    return found


def _inside(spans: list[Span] | None, at: tuple[int, int]) -> bool:
    # Without spans (the YAML does not compose, CK101 says why) every `#` is taken as written.
    return spans is not None and any(start <= at < end for start, end in spans)


def _markdown_directive(scanned: Scan, lines: list[str], comment: Comment) -> _Directive | None:
    match = _HTML.match(comment.body)
    if match is not None:
        kind, codes = match["kind"], match["codes"]
    elif _HTML_MENTION.match(comment.body):
        kind, codes = "invalid", None
    else:
        return None
    line, column = scanned.position(comment.start)
    last, end_column = scanned.position(comment.end)
    before = lines[line - 1][: column - 1]
    after = lines[last - 1][end_column - 1 :]
    alone = not before.strip() and not after.strip()
    return _Directive(line - 1, column, kind, codes, alone, False, last - 1)


def _selectors(
    codes: str | None, kind: str, known: Sequence[tuple[str, str]]
) -> tuple[tuple[str, ...], str | None]:
    if kind == "invalid":
        return (
            (),
            "not a suppression coursekit understands: write ignore[CODE], ignore-start[CODE] or ignore-end",
        )
    if kind == "ignore-end":
        return (), None
    names = [part.strip() for part in (codes or "").split(",") if part.strip()]
    if not names:
        return (), f"'{kind}' must name what it ignores, e.g. {kind}[CK301]"
    for name in names:
        if not any(selector_matches(code, rule, name) for code, rule in known):
            return (), f"'{name}' matches no rule (see `coursekit rules`)"
    return tuple(names), None


def _problem(path: str, line: int, column: int, message: str) -> Diagnostic:
    return Diagnostic(path, line, column, INVALID, message, Severity.WARNING, _rule_name(INVALID))


def _next_content(lines: list[str], index: int, in_yaml: bool) -> int | None:
    for j in range(index + 1, len(lines)):
        stripped = lines[j].strip()
        if not stripped or (in_yaml and stripped.startswith("#")):
            continue
        return j
    return None


def _block_end(lines: list[str], start: int) -> int:
    """Last line index of the YAML block that starts at `start` (deeper-indented lines)."""
    indent = len(lines[start]) - len(lines[start].lstrip(" "))
    end = start
    for j in range(start + 1, len(lines)):
        stripped = lines[j].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(lines[j]) - len(lines[j].lstrip(" ")) <= indent or stripped == "---":
            break
        end = j
    return end


# Applying -----------------------------------------------------------------------------------


def per_file_ignored(diagnostic: Diagnostic, config: Config) -> bool:
    for pattern, selectors in config.per_file_ignores.items():
        if fnmatch.fnmatch(diagnostic.path, pattern) and any(
            selector_matches(diagnostic.code, diagnostic.name, s) for s in selectors
        ):
            return True
    return False


# The last course's texts (a copy of the mapping) and which of them hold a directive: a process
# that checks again and again (the daemon, the language server) keeps the texts an edit did not
# touch, the very objects, so only the others are scanned. Scanning all of them took ~40 ms of
# each run at 1,000 chapters, and a memo looked up text by text still ~12 ms.
_last: tuple[dict[str, str], frozenset[str]] = ({}, frozenset())


def _holding(texts: Mapping[str, str], plain: Mapping[str, str]) -> list[str]:
    """The paths whose text may hold a directive: not those `plain` names with that very text
    (a replayed chapter's texts its record found none in: ~15 ms of a fresh run's scan at 1,000
    chapters)."""
    global _last

    def scanned(path: str, text: str) -> bool:
        return plain.get(path) is not text and may_hold_directive(path, text)

    if not remembering():
        return [p for p, t in texts.items() if scanned(p, t)]
    before, held = _last
    found = [p for p, t in texts.items() if (p in held if before.get(p) is t else scanned(p, t))]
    _last = (dict(texts), frozenset(found))
    return found


def apply(
    diagnostics: Sequence[Diagnostic],
    texts: Mapping[str, str],
    config: Config,
    plain: Mapping[str, str] | None = None,
) -> list[Diagnostic]:
    """Drop what per-file ignores and inline suppressions cover; add CK001 and CK002.
    `plain`: path -> a text known to hold no directive (`Course.plain`)."""
    rules = _rules()
    suppressions: list[Suppression] = []
    extra: list[Diagnostic] = []
    for path in sorted(_holding(texts, plain or {})):  # (sorting the few, not every text)
        parsed = parse(path, texts[path], rules)
        suppressions.extend(parsed.suppressions)
        extra.extend(parsed.problems)
    by_path: dict[str, list[Suppression]] = {}
    for suppression in suppressions:
        by_path.setdefault(suppression.path, []).append(suppression)
    kept: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if per_file_ignored(diagnostic, config):
            continue
        hit = False
        for suppression in by_path.get(diagnostic.path, ()):
            selector = suppression.covers(diagnostic)
            if selector is not None:
                suppression.used.add(selector)
                hit = True
        if not hit:
            kept.append(diagnostic)
    unused_name = _rule_name(UNUSED)
    for suppression in suppressions:
        for selector in suppression.selectors:
            if selector in suppression.used:
                continue
            if not any(selector_matches(c, n, selector) and config.selects(c, n) for c, n in rules):
                continue  # nothing it names runs: it cannot be judged
            extra.append(
                Diagnostic(
                    suppression.path,
                    suppression.line,
                    suppression.column,
                    UNUSED,
                    f"unused suppression: no '{selector}' diagnostic "
                    f"{'on this line' if suppression.first == suppression.last else 'in this block'}"
                    f" (lines {suppression.first}-{suppression.last}); remove it",
                    Severity.WARNING,
                    unused_name,
                )
            )
    for diagnostic in extra:
        if config.selects(diagnostic.code, diagnostic.name) and not per_file_ignored(
            diagnostic, config
        ):
            kept.append(diagnostic)
    return kept
