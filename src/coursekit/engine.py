"""Load once, check many: run the selected rules over the loaded course."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from coursekit import suppress
from coursekit.diagnostics import ORDER, Diagnostic
from coursekit.load import LoadResult, load_course
from coursekit.load.listing import KnownTree
from coursekit.load.reader import Models
from coursekit.model.base import Location, Node
from coursekit.model.documents import LessonFrontMatter
from coursekit.model.tree import Course
from coursekit.options import Options
from coursekit.project import Project
from coursekit.records import record
from coursekit.rules import REGISTRY, Context, Rule
from coursekit.store import ResultStore, RunStore

INTERNAL_ERROR = "CK000"
# A document that does not load is not checked at all: like ruff's syntax errors, these are
# reported whatever `select`/`ignore` say, so a selection can never hide unchecked content.
UNSKIPPABLE = frozenset({"CK101", "CK102", "CK103", "CK104", "CK105"})


@record
class CheckResult:
    course: Course
    diagnostics: list[Diagnostic]

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")

    @property
    def crashed(self) -> bool:
        return any(d.code == INTERNAL_ERROR for d in self.diagnostics)


def run_rules(ctx: Context) -> list[Diagnostic]:
    """Every selected rule's findings: per-chapter rules through their kept results."""
    from coursekit.incremental import run_per_chapter

    selected = [
        rule
        for rule in REGISTRY.values()
        if rule.check is not None and ctx.config.selects(rule.code, rule.name)
    ]
    # per-chapter rules first: the formulas family starts the program servers early, so that
    # their start-up overlaps the sympy work rather than following it (coursekit.rules._programs)
    per_chapter = [rule for rule in selected if rule.per_chapter is not None]
    summaries = [s for rule in selected if rule.per_chapter is None for s in rule.summaries]
    found = run_per_chapter(ctx, per_chapter, run_rule, summaries)
    for rule in selected:
        if rule.per_chapter is None:
            found += run_rule(ctx, rule)[0]
    return found


def run_rule(ctx: Context, rule: Rule) -> tuple[list[Diagnostic], bool]:
    """One rule's diagnostics, and False when it crashed (reported as CK000)."""
    assert rule.check is not None
    found: list[Diagnostic] = []
    try:
        for finding in rule.check(ctx):
            found.append(
                Diagnostic.at(
                    finding.location,
                    rule.code,
                    finding.message,
                    rule.severity,
                    rule.name,
                    finding.fixable,
                    finding.related,
                )
            )
    except Exception as exc:  # a bug in a rule must not hide what the others found
        where = Location(ctx.course.manifest_path or ctx.course.root)
        message = f"rule {rule.title} crashed: {type(exc).__name__}: {exc} (please report this)"
        found.append(Diagnostic.at(where, INTERNAL_ERROR, message, name="internal-error"))
        return found, False
    return found, True


def narrow(diagnostics: Sequence[Diagnostic], paths: Sequence[str]) -> list[Diagnostic]:
    """Keep diagnostics in the given project-relative files or folders.

    A diagnostic also stays when a named file is one it depends on (`related`): renaming a
    planned item in chapter.yaml breaks a link in a lesson, and naming chapter.yaml shows it.
    """
    if not paths:
        return list(diagnostics)
    wanted = [p.rstrip("/") for p in paths]

    def named(path: str) -> bool:
        return any(path == p or path.startswith(p + "/") or p in ("", ".") for p in wanted)

    return [d for d in diagnostics if named(d.path) or any(named(r) for r in d.related)]


def load_context(
    project: Project,
    options: Options | None = None,
    store: ResultStore | None = None,
    overlays: Mapping[Path, str] | None = None,
    models: Models | None = None,
    tree: KnownTree | None = None,
) -> tuple[LoadResult, Context]:
    """The loaded course and the context rules see (shared by `check`, `owed` and `lsp`).

    `overlays` (absolute path -> text) replace those files' content: unsaved editor buffers;
    `tree` says what the course folder holds, as this run first saw it (`KnownTree`)."""
    layered = _run_store(store)
    options = options or Options()
    hint = _new_maths(options)
    loaded = load_course(project.course_dir, project.root, layered, overlays, models, hint, tree)
    return loaded, Context(loaded.course, project.config, layered, options)


def _run_store(store: ResultStore | None) -> ResultStore:
    """What one run reads and writes through: a memory layer over `store` (parsed documents
    are kept there), or memory alone."""
    from coursekit import cache

    return cache.Layered(store) if store is not None else RunStore()


def _new_maths(options: Options) -> Callable[[type[Node], Any], None] | None:
    """What the load tells of a document no run has seen: a lesson's front matter with claims
    or formulas in it starts the sympy server there and then (its interpreter imports sympy on
    the other core while the load goes on), rather than at the rules' first formula after
    the load; a prose edit's front matter is one the cache holds, and starts nothing."""
    server = options.sympy
    if not options.formulas or server is None:
        return None

    def told(kind: type[Node], data: Any) -> None:
        maths = isinstance(data, dict) and (data.get("claims") or data.get("formulas"))
        if kind is LessonFrontMatter and maths:
            server.start()

    return told


def check(
    project: Project,
    paths: Sequence[str] = (),
    options: Options | None = None,
    store: ResultStore | None = None,
    overlays: Mapping[Path, str] | None = None,
    models: Models | None = None,
    tree: KnownTree | None = None,
    loaded: LoadResult | None = None,
) -> CheckResult:
    """The findings on the course (`loaded`, when the caller has it loaded already)."""
    if loaded is None:
        loaded, ctx = load_context(project, options, store, overlays, models, tree)
    else:
        ctx = Context(loaded.course, project.config, _run_store(store), options or Options())
    return check_loaded(project, loaded, ctx, paths)


def check_loaded(
    project: Project, loaded: LoadResult, ctx: Context, paths: Sequence[str] = ()
) -> CheckResult:
    """What `check` reports on a course already loaded (the language server patches one
    edited document into the course it loaded before, rather than loading it again)."""
    # The loader knows codes, not the registry: name its diagnostics here.
    diagnostics = [
        d.at_named(REGISTRY[d.code].name) if d.code in REGISTRY else d for d in loaded.diagnostics
    ]
    diagnostics = [
        d for d in diagnostics if d.code in UNSKIPPABLE or project.config.selects(d.code, d.name)
    ]
    diagnostics += run_rules(ctx)
    course = loaded.course
    diagnostics = suppress.apply(diagnostics, course.texts, project.config, course.plain)
    diagnostics = sorted(set(narrow(diagnostics, paths)), key=ORDER)
    return CheckResult(course=loaded.course, diagnostics=diagnostics)
