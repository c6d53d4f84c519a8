"""Per-chapter rule results, kept between runs: an edit re-runs the rules where it landed.

A rule declared `per_chapter` (rules/base.py) finds in a chapter what that chapter's own files
and a few named course-wide facts (rules/facts.py) imply, nothing else. Its findings are kept
per chapter in the result store under a key made of exactly those inputs: the digest of every
file the chapter holds or lists (and which assets exist), and the digests of the facts it
declared. On the next run each such rule runs once, over the chapters whose key changed
(`Context.only`), and the findings of the others are taken from the store. Rules without the
declaration read the whole course and run every time.

The store holds one entry per chapter: for each set of (configuration, options) that checked
it, the run's own first and at most `STATES` of them, each rule's key and findings, and the key
of all the entry was written under (the chapter's digest and every fact any rule reads): when
that key holds, every row does, and no rule's own key is read or worked out (`kept_rows`). (An
entry per chapter and set made two sets used in turn, `check` and `check --structural`,
replace each other's entries in the pack of what a run used: each run after a switch read its
1,000 entries one by one, 0.69-0.71 against 0.45-0.48 s a prose edit at 1,000 chapters.) A
set not used for `USED_WITHIN_NS` (a configuration changed since, say) is dropped from each
entry, so it costs the pack nothing for long. A run writes back only the entries of the
chapters where something was computed, so an edit to one lesson writes one small entry, not
every chapter's (3.6 MB of JSON at 1,000 chapters, written twice: as its entry and into the
pack). A rule that crashed keeps nothing,
so the next run tries it again. Findings are attributed to a chapter by the file they are in;
a finding in a file that is not one chapter's own (a shared file, Book 0) makes that rule run
chapter by chapter, which attributes it exactly. A run whose store is dropped with it
(`store.RunStore`: `check --no-cache`) keeps nothing, so it computes no key at all.
A rule declared `course_part` reports on course-wide tables in a run of its own, with no chapter,
every time (it is cheap); a chapter whose findings depended on the clock keeps nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

from coursekit import collector
from coursekit.diagnostics import Diagnostic
from coursekit.kept_rows import EVERY, NO_ROWS, as_stored, decoded, encode, pairs, whole
from coursekit.memo import ByIdentity, let_go_of_texts, remembering
from coursekit.model.tree import Chapter, Course
from coursekit.records import record
from coursekit.rules import Context, Rule
from coursekit.rules.base import Summary
from coursekit.rules.facts import (
    chapter_files,
    chapter_key,
    digest,
    files_by_chapter,
    unsteady_chapters,
)
from coursekit.store import RunStore

NAMESPACE = "rules"
FORMAT = 5  # bump when an entry's shape changes
STATES = 3  # the sets of configuration and options a chapter's entry keeps results for
USED_WITHIN_NS = 7 * 24 * 3600 * 10**9  # ... while each was used within a week
# When each set was used last: one entry in a namespace of its own (`NAMESPACE` holds chapters)
SETS_NAMESPACE, SETS = "rule-sets", str(FORMAT)
NOTED_WITHIN_NS = 24 * 3600 * 10**9  # a set's use is written down again after a day

# Runs one rule on a context: its diagnostics, and False when it crashed.
RunRule = Callable[[Context, Rule], tuple[list[Diagnostic], bool]]


# A course of more chapters than this is checked in batches of this many: every rule over one
# batch, then the next. What the rules work out from a chapter (`Course.derive_of`: its texts,
# its lessons' maths and their verdicts, its numbers' account) and from its texts (each lesson
# body's Markdown scan, its links, the maths it writes: `memo.per_text`) is then held for one
# batch at a time, not for every chapter until the last rule has run: a cold check of 1,000
# chapters peaked at 221 MiB against 273 (246 against 296 for a first run with the cache on).
BATCH = 100


def state_key(ctx: Context) -> str:
    """Everything besides the course a kept result depends on (the store adds the versions)."""
    options = {
        k: v
        for k, v in ctx.options.key().items()
        if isinstance(v, str | int | float | bool) or v is None
    }
    return digest([FORMAT, ctx.config.fingerprint, options, str(ctx.course.root)])


@record
class _Part:
    """One chapter's part of a plan."""

    keys: dict[tuple[str, ...], str]  # the facts some rules read -> the key of those rules
    # rule code -> [key, rows], EVERY -> the key of all its inputs; or the stored entry, whole
    # (`kept_rows`: written back as it is)
    kept: dict[str, Any]
    found: list[Diagnostic]  # what the kept rows hold
    todo: list[str]  # the rule codes to run on the chapter
    changed: bool  # whether its entry must be written back


# Chapter parts already worked out, by the identity of the chapter's stored entry and equal to
# the key of the inputs they were worked out from (its digest and every fact the rules read):
# a process that checks again and again keeps its store in memory, and at 1,000 chapters
# working out every unchanged chapter's 55 keys and rows again took ~0.1 s of each run.
_PARTS: ByIdentity[_Part] = ByIdentity(100_000)
_OWNERS: ByIdentity[dict[str, str | None]] = ByIdentity(16)


class _Plan:
    """Which (rule, chapter) results are kept, and which must be computed."""

    def __init__(self, ctx: Context, rules: Sequence[Rule]) -> None:
        # chapter -> the facts some rules read -> their key there (a dict of each rule's key
        # per chapter held ~3 MB of a cold run at 1,000 chapters, for a few distinct keys)
        self.keys: dict[str, dict[tuple[str, ...], str]] = {}
        self.reads = {rule.code: rule.per_chapter or () for rule in rules}  # code -> its facts
        self.todo: dict[str, list[str]] = {}  # rule code -> chapters to run it on
        self.kept: dict[str, dict[str, Any]] = {}  # chapter -> its `_Part.kept`
        self.changed: set[str] = set()  # chapters whose entry must be written back
        # chapter -> the results its entry keeps for other sets of options, the last used first
        self.others: dict[str, dict[str, Any]] = {}
        nothing: dict[str, list[Any]] = {}  # key -> the pair [key, NO_ROWS] (`_pair`)
        self._nothing = nothing
        self.found: list[Diagnostic] = []
        self.state = state_key(ctx)
        noted = ctx.store.get(SETS_NAMESPACE, SETS)
        self.used = _used(noted, self.state)  # set -> when it was used, the last used first
        # (written down when new, or a day old: a run that changed nothing writes nothing)
        when = noted.get(self.state) if isinstance(noted, dict) else None
        self.noting = type(when) is not int or self.used[self.state] - when > NOTED_WITHIN_NS
        course = ctx.course
        self._course = course
        self._owner: dict[str, str | None] | None = None  # file -> its chapter (None: shared)
        by_facts = {r.per_chapter or () for r in rules}  # rules reading the same facts
        read = sorted({name for names in by_facts for name in names})
        shape = (tuple(rule.code for rule in rules), tuple(r.per_chapter or () for r in rules))
        self.shape = digest(shape)  # what a whole entry holds a row of each for
        for chapter_id, chapter in course.chapters.items():
            entry = ctx.store.get(NAMESPACE, self.entry(chapter_id))
            stored = entry.get(self.state) if isinstance(entry, dict) else None
            others = self.others[chapter_id] = _others(entry, self.state, self.used)
            every = chapter_key(course, chapter, read)

            def work(chapter: Chapter = chapter, stored: Any = stored, every: str = every) -> _Part:
                return _part(course, chapter, stored, rules, by_facts, every, self.shape, nothing)

            if isinstance(stored, dict) and remembering():
                part = _PARTS.get(stored, work, shape, every)
            else:
                part = work()
            self.keys[chapter_id] = part.keys
            # run_per_chapter adds to the entries of the chapters it runs rules on: a copy of
            # those; the others stay the stored (or remembered) entry itself
            self.kept[chapter_id] = dict(part.kept) if part.todo else part.kept
            self.found += part.found
            for code in part.todo:
                self.todo.setdefault(code, []).append(chapter_id)
            if part.changed or _dropped(entry, stored, others):
                self.changed.add(chapter_id)

    def entry(self, chapter_id: str) -> str:
        """The store key of a chapter's kept results (for every set of options)."""
        return f"{FORMAT}:{chapter_id}"

    def keep(self, chapter_id: str, code: str, rows: list[Any]) -> None:
        """Keep what a rule found in a chapter, under the rule's key there. The rules of a
        chapter that read the same facts share a key, and those that found nothing share
        one pair, only ever read (~6 MB of a cold run at 1,000 chapters, a list each)."""
        key = self.keys[chapter_id][self.reads[code]]
        self.kept[chapter_id][code] = _pair(key, rows, self._nothing)

    def save(self, ctx: Context) -> None:
        for chapter_id in self.changed:
            kept = as_stored(self.kept[chapter_id], self.shape, self.reads)
            entry = {self.state: kept, **self.others.get(chapter_id, {})}
            ctx.store.put(NAMESPACE, self.entry(chapter_id), entry)
        if self.noting:
            ctx.store.put(SETS_NAMESPACE, SETS, self.used)

    def split(self, found: Sequence[Diagnostic], chapters: Sequence[str]) -> dict[str, list[Any]]:
        """Findings by the chapter whose file they are in; {} when one is in no such file."""
        if self._owner is None:  # (an edit runs each rule on one chapter: no split at all)
            self._owner = _owners(self._course)
        wanted = set(chapters)
        by_chapter: dict[str, list[Diagnostic]] = {c: [] for c in chapters}
        for diagnostic in found:
            chapter_id = self._owner.get(diagnostic.path)
            if chapter_id is None or chapter_id not in wanted:
                return {}
            by_chapter[chapter_id].append(diagnostic)
        return {c: encode(d) for c, d in by_chapter.items()}


def _part(
    course: Course,
    chapter: Chapter,
    stored: Any,
    rules: Sequence[Rule],
    by_facts: set[Any],
    every: str,
    shape: str,
    nothing: dict[str, list[Any]],
) -> _Part:
    """What of the chapter's stored entry still holds, and which rules must run on it
    (`every`: the key of all it was written under; `shape`: of the rules a whole entry holds
    a row of each for). At 1,000 chapters, checking every rule's key of every chapter took
    ~0.1 s of an edit: a whole entry's are not read."""
    found = whole(stored, every, shape)
    if found is not None:
        return _Part({}, stored, found, [], False)  # (the plan copies what it adds to)
    kept = pairs(stored)
    keys = {facts: chapter_key(course, chapter, facts) for facts in by_facts}
    part = _Part(keys, {EVERY: every}, [], [], True)
    for rule in rules:
        key = keys[rule.per_chapter or ()]
        hit: Any = kept.get(rule.code)
        ok = isinstance(hit, list) and len(hit) == 2 and hit[0] == key
        rows = decoded(hit[1]) if ok else None
        if rows is not None:
            part.found += rows
            part.kept[rule.code] = _pair(key, hit[1], nothing)
        else:
            part.todo.append(rule.code)
    return part


def _used(kept: Any, state: str) -> dict[str, int]:
    """When each set of options was last used (`state`, now), those used within
    `USED_WITHIN_NS` alone, the last used first."""
    now = time.time_ns()
    used = {state: now}
    if isinstance(kept, dict):
        recent = [(when, s) for s, when in kept.items() if type(when) is int and type(s) is str]
        for when, s in sorted(recent, reverse=True):
            if now - when < USED_WITHIN_NS:
                used.setdefault(s, when)
    return used


def _others(entry: Any, state: str, used: dict[str, int]) -> dict[str, Any]:
    """What a chapter's stored entry keeps for sets of options other than `state` that are
    still used, the last used first, `STATES` - 1 of them at most."""
    if not isinstance(entry, dict):
        return {}
    others = [(s, entry[s]) for s in used if s != state and isinstance(entry.get(s), dict)]
    return dict(others[: STATES - 1])


def _dropped(entry: Any, stored: Any, others: dict[str, Any]) -> bool:
    """Whether the stored entry holds sets of options it no longer keeps (written again
    without them, once)."""
    return isinstance(entry, dict) and len(entry) > len(others) + isinstance(stored, dict)


def _pair(key: str, rows: list[Any], nothing: dict[str, list[Any]]) -> list[Any]:
    """A rule's kept [key, rows] in a chapter; those that found nothing under one key are one
    pair (`nothing`), only ever read: ~6 MB of a cold run at 1,000 chapters, a list each, and
    as much after an edit every chapter's keys move with (a Book 0 or notation change)."""
    return [key, rows] if rows else nothing.setdefault(key, [key, NO_ROWS])


def _owners(course: Course) -> dict[str, str | None]:
    """Each file's chapter (None: a file two chapters hold), worked out once per set of
    chapters' files (`chapter_files`; a patched course carries it)."""

    def compute() -> dict[str, str | None]:
        owner: dict[str, str | None] = {}
        for chapter_id, chapter in course.chapters.items():
            for path in chapter_files(course, chapter):
                owner[path] = chapter_id if path not in owner else None
        return owner

    return _OWNERS.get(files_by_chapter(course), compute, tuple(course.chapters))


def run_per_chapter(
    ctx: Context, rules: Sequence[Rule], run: RunRule, summaries: Sequence[Summary] = ()
) -> list[Diagnostic]:
    """The findings of `rules` (all declared `per_chapter`) on every chapter, computing only
    the (rule, chapter) pairs whose inputs changed since the store last saw them; `summaries`
    are those the rules comparing chapters will read (`Rule.summaries`)."""
    if not ctx.course.chapters:  # what such a rule finds outside chapters is still reported
        return [d for rule in rules for d in run(replace(ctx, only=frozenset()), rule)[0]]
    # A run whose store is dropped with it keeps nothing for a later one: no keys, no
    # attribution, no encoded findings (at 1,000 chapters those held ~8 MB of a cold check).
    plan = None if isinstance(ctx.store, RunStore) else _Plan(ctx, rules)
    found = [] if plan is None else list(plan.found)
    for rule in rules:
        if rule.course_part:
            found += run(replace(ctx, only=frozenset(), course_part=True), rule)[0]
    ctx = replace(ctx, course_part=False)
    every = list(ctx.course.chapters)
    todo = {rule.code: every for rule in rules} if plan is None else plan.todo
    collector.running_rules_on(len(every) if plan is None else len(set(chain(*todo.values()))))
    for batch, part in _batches(ctx, todo):
        for rule in rules:
            chapters = part.get(rule.code)
            if not chapters:
                continue
            diagnostics, ok = run(replace(batch, only=frozenset(chapters)), rule)
            found += diagnostics
            if plan is None or not ok:
                continue  # nothing is kept: a run that keeps nothing, or a crash (reported)
            if len(chapters) == 1:  # what a run over one chapter finds is that chapter's
                by_chapter = {chapters[0]: encode(diagnostics)}
            else:
                by_chapter = plan.split(diagnostics, chapters) or _one_by_one(
                    batch, rule, run, chapters
                )
            for chapter_id, rows in by_chapter.items():
                plan.keep(chapter_id, rule.code, rows)
        if batch.ahead:  # another batch follows: this one's views are let go of first
            _summarise(batch, summaries)
            let_go_of_texts()
            ctx.course.let_go(batch.only or ())
    if plan is None:
        return found
    for chapter_id in unsteady_chapters(ctx.course):
        plan.kept[chapter_id] = {}  # a timeout is not a fact about the chapter
        plan.changed.add(chapter_id)
    plan.save(ctx)
    return found


def _batches(
    ctx: Context, todo: dict[str, list[str]]
) -> Iterator[tuple[Context, dict[str, list[str]]]]:
    """The chapters some rule runs on, in course order, `BATCH` at a time: each batch's
    context, naming them (`only`) and those of the batches after it (`ahead`), and its part of
    `todo` (rule code -> its chapters in the batch)."""
    wanted = {chapter_id for chapters in todo.values() for chapter_id in chapters}
    order = [chapter_id for chapter_id in ctx.course.chapters if chapter_id in wanted]
    place = {chapter_id: n // BATCH for n, chapter_id in enumerate(order)}
    parts: list[dict[str, list[str]]] = [{} for _ in range(0, len(order), BATCH)]
    for code, chapters in todo.items():
        for chapter_id in chapters:
            parts[place[chapter_id]].setdefault(code, []).append(chapter_id)
    for index, part in enumerate(parts):
        start = index * BATCH
        only, ahead = frozenset(order[start : start + BATCH]), frozenset(order[start + BATCH :])
        yield replace(ctx, only=only, ahead=ahead), part


def _summarise(batch: Context, summaries: Sequence[Summary]) -> None:
    """Work out (and keep) the batch's chapters' summaries while what they are read from is
    at hand. A summary that fails here fails again where its rule reads it, which reports it
    (coursekit.engine.run_rule): this is only a head start."""
    for chapter in batch.chapters():
        for read in summaries:
            with contextlib.suppress(Exception):
                read(batch, chapter)


def _one_by_one(
    ctx: Context, rule: Rule, run: RunRule, chapters: Sequence[str]
) -> dict[str, list[Any]]:
    """The rule run on each chapter alone: exact attribution (nothing kept after a crash)."""
    by_chapter: dict[str, list[Any]] = {}
    for chapter_id in chapters:
        diagnostics, ok = run(replace(ctx, only=frozenset({chapter_id})), rule)
        if not ok:
            return {}
        by_chapter[chapter_id] = encode(diagnostics)
    return by_chapter
