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

Codes are selected like everywhere else: a code, a prefix (`CK3`) or a rule name. Texts come
from the loaded course (`Course.texts`): no file is opened here. A suppression that suppresses
nothing is CK001; one that cannot be understood is CK002 (see rules/meta.py).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from coursekit.authoring.yamledit import comment_start
from coursekit.config import Config, selector_matches
from coursekit.diagnostics import Diagnostic, Severity

UNUSED = "CK001"
INVALID = "CK002"

_DIRECTIVE = r"coursekit:\s*(?P<kind>ignore-start|ignore-end|ignore)\b(?:\[(?P<codes>[^\]]*)\])?"
_YAML = re.compile(r"^#\s*" + _DIRECTIVE)
_HTML = re.compile(r"<!--\s*" + _DIRECTIVE + r"[^>]*?-->")
_YAML_MENTION = re.compile(r"^#\s*coursekit:")
_HTML_MENTION = re.compile(r"<!--\s*coursekit:")


@dataclass
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


@dataclass
class _Parsed:
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)


def parse(path: str, text: str, rules: Sequence[tuple[str, str]] | None = None) -> _Parsed:
    """The suppressions written in one file, and CK002 for those that cannot be understood."""
    known = list(rules) if rules is not None else _rules()
    result = _Parsed()
    if "coursekit:" not in text:
        return result
    lines = text.split("\n")
    markdown = path.endswith(".md")
    front_end = _front_matter_end(lines) if markdown else len(lines)
    open_blocks: list[Suppression] = []
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r")
        number = index + 1
        in_yaml = not markdown or 0 < index < front_end
        for kind, codes, column, alone in _directives(line, in_yaml, markdown):
            selectors, problem = _selectors(codes, kind, known)
            if problem:
                result.problems.append(_problem(path, number, column, problem))
                if kind != "ignore-end":
                    continue
            if kind == "ignore":
                first, last = number, number
                if alone:
                    target = _next_content(lines, index, in_yaml)
                    if target is not None:
                        first = number
                        last = _block_end(lines, target) + 1 if in_yaml else target + 1
                result.suppressions.append(
                    Suppression(path, number, column, selectors, first, last)
                )
            elif kind == "ignore-start":
                block = Suppression(path, number, column, selectors, number, len(lines))
                open_blocks.append(block)
                result.suppressions.append(block)
            elif open_blocks:
                open_blocks.pop().last = number
            else:
                result.problems.append(
                    _problem(
                        path, number, column, "'ignore-end' without an 'ignore-start' before it"
                    )
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


def _directives(
    line: str, in_yaml: bool, markdown: bool
) -> Iterable[tuple[str, str | None, int, bool]]:
    """(kind, codes text, 1-based column, alone on its line) for each directive on a line."""
    if in_yaml:
        at = comment_start(line)
        if at is not None:
            match = _YAML.match(line[at:])
            if match is not None:
                yield match["kind"], match["codes"], at + 1, not line[:at].strip()
            elif _YAML_MENTION.match(line[at:]):
                yield "invalid", None, at + 1, False
        return
    if markdown:
        found = False
        for match in _HTML.finditer(line):
            found = True
            alone = not (line[: match.start()] + line[match.end() :]).strip()
            yield match["kind"], match["codes"], match.start() + 1, alone
        mention = _HTML_MENTION.search(line)
        if not found and mention is not None:
            yield "invalid", None, mention.start() + 1, False


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


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index
    return 0


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


def apply(
    diagnostics: Sequence[Diagnostic], texts: Mapping[str, str], config: Config
) -> list[Diagnostic]:
    """Drop what per-file ignores and inline suppressions cover; add CK001 and CK002."""
    rules = _rules()
    suppressions: list[Suppression] = []
    extra: list[Diagnostic] = []
    for path, text in sorted(texts.items()):
        if path.endswith((".yaml", ".yml", ".md")):
            parsed = parse(path, text, rules)
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
