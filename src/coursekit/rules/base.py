"""The rule registry. A rule is a small function from the loaded course to findings.

    @rule("CK301", "apparatus-unresolved")
    def apparatus_unresolved(ctx: Context) -> Iterator[Finding]:
        '''An apparatus link names an entry Book 0 does not have.

        Fails:
            apparatus: [{id: 0.IT.09}]
        Passes:
            apparatus: [{id: 0.IT.01}]
        '''

The docstring is the documentation `coursekit explain CK301` prints. Rules never print and never
read files; the engine turns each `Finding` into a `Diagnostic` with the rule's code and severity.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import field
from typing import TYPE_CHECKING

from coursekit.config import selector_matches
from coursekit.diagnostics import Severity
from coursekit.model.base import Location
from coursekit.model.tree import Chapter, Course
from coursekit.options import Options
from coursekit.records import record
from coursekit.store import MemoryStore as MemoryStore
from coursekit.store import ResultStore as ResultStore

if TYPE_CHECKING:
    from coursekit.config import Config


@record(frozen=True, slots=True)
class Finding:
    location: Location
    message: str
    fixable: bool = False
    related: tuple[str, ...] = ()  # other files this finding depends on (see Diagnostic)


@record
class Context:
    """What a rule may look at: the course, the configuration, and where to keep results.

    `options` carries the run's switches from the command line (see `coursekit.options`).
    `only` names the chapters a per-chapter rule is to check this time (None: every chapter);
    the engine narrows it to the chapters whose inputs changed (see `coursekit.incremental`).
    `ahead` names the chapters the run checks after these (it checks a large course in batches):
    work started early, in the background, may start for them too.
    `course_part`: whether a per-chapter rule declared `course_part` also reports on what lies
    outside every chapter (course.yaml's and Book 0's tables); the engine runs that part on its
    own, with no chapter, so that it is never attributed to one.
    """

    course: Course
    config: Config
    store: ResultStore = field(default_factory=MemoryStore)
    options: Options = field(default_factory=Options)
    only: frozenset[str] | None = None
    course_part: bool = True
    ahead: frozenset[str] = frozenset()

    def chapters(self, ahead: bool = False) -> Iterator[Chapter]:
        """The chapters a per-chapter rule checks, in course order; with `ahead`, also those
        the run checks after them."""
        for chapter_id, chapter in self.course.chapters.items():
            if self.only is None or chapter_id in self.only or (ahead and chapter_id in self.ahead):
                yield chapter


CheckFn = Callable[[Context], Iterable[Finding]]
Summary = Callable[[Context, Chapter], object]


@record(frozen=True)
class Rule:
    code: str
    name: str
    family: str
    severity: Severity
    summary: str
    doc: str
    check: CheckFn | None  # None: emitted by the loader, documented here
    fixable: bool = False
    # None: the rule reads the whole course and runs every time. A tuple: the rule's findings
    # on a chapter depend only on that chapter's files and these named facts (rules/facts.py),
    # so its results are kept per chapter and it re-runs only where one of them changed.
    per_chapter: tuple[str, ...] | None = None
    # A per-chapter rule that also reads course-wide tables (`Context.course_part`): that part
    # is cheap and runs every time, with no chapter.
    course_part: bool = False
    # A rule that compares chapters names the per-chapter summaries it reads (each a function
    # that works out, and keeps, one chapter's: rules/facts.py `summary`). A run that checks a
    # large course in batches works them out while a batch's documents are read, rather than
    # reading every chapter again for the comparison (coursekit.incremental).
    summaries: tuple[Summary, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.code}/{self.name}"


REGISTRY: dict[str, Rule] = {}


def _family(module: str) -> str:
    return module.rsplit(".", 1)[-1]


# A period followed by a space ends a sentence unless it closes an abbreviation ("Prop. 1",
# "e.g. a", "Fig. 2") or what follows is not a sentence's start (a digit, a lower-case word).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(])")
_ABBREVIATIONS = frozenset(
    {
        "prop",
        "props",
        "fig",
        "figs",
        "eq",
        "eqs",
        "e.g",
        "i.e",
        "cf",
        "no",
        "vs",
        "etc",
        "sec",
        "ch",
    }
)


def first_sentence(paragraph: str) -> str:
    """The paragraph's first sentence, never cut inside an abbreviation."""
    for match in _SENTENCE_END.finditer(paragraph):
        before = paragraph[: match.start()].rstrip(".!?").rsplit(" ", 1)[-1].lower()
        if before in _ABBREVIATIONS or len(before) == 1:
            continue
        return paragraph[: match.start()]
    return paragraph


def rule(
    code: str,
    name: str,
    severity: Severity = Severity.ERROR,
    fixable: bool = False,
    per_chapter: tuple[str, ...] | None = None,
    course_part: bool = False,
    summaries: tuple[Summary, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under a stable code and name; its docstring documents it.

    `per_chapter`: the rule iterates `ctx.chapters()` and what it finds in a chapter depends on
    that chapter's files and the named course-wide facts alone (see `Rule.per_chapter`).
    `course_part`: it also reports on course-wide tables when `ctx.course_part` (see `Context`).
    `summaries`: the per-chapter summaries a rule comparing chapters reads (see `Rule.summaries`).
    """

    def register(func: CheckFn) -> CheckFn:
        doc = func.__doc__ or ""
        family = _family(func.__module__)
        _add(code, name, severity, doc, func, family, fixable, per_chapter, course_part, summaries)
        return func

    return register


def documented(
    code: str, name: str, doc: str, family: str, severity: Severity = Severity.ERROR
) -> None:
    """Register a code that is emitted outside a rule function (by the loader)."""
    _add(code, name, severity, doc, None, family, False)


def _add(
    code: str,
    name: str,
    severity: Severity,
    doc: str,
    func: CheckFn | None,
    family: str,
    fixable: bool,
    per_chapter: tuple[str, ...] | None = None,
    course_part: bool = False,
    summaries: tuple[Summary, ...] = (),
) -> None:
    if code in REGISTRY:
        raise ValueError(f"rule code {code} registered twice")
    text = inspect.cleandoc(doc)
    paragraph = " ".join(text.split("\n\n", 1)[0].split()) if text else name
    # The first sentence: what `coursekit rules` shows on one line.
    summary = first_sentence(paragraph)
    REGISTRY[code] = Rule(
        code,
        name,
        family,
        severity,
        summary,
        text,
        func,
        fixable,
        per_chapter,
        course_part,
        summaries,
    )


def lookup(selector: str) -> list[Rule]:
    """Rules matching a code ('CK301'), a prefix ('CK3'), or a name ('apparatus-unresolved')."""
    wanted = selector.strip()
    return [
        rule
        for rule in REGISTRY.values()
        if selector_matches(rule.code, rule.name, wanted) or rule.family == wanted
    ]
