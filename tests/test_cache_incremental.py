"""Per-chapter rule results (coursekit.incremental): an edit re-runs the rules where it landed,
and what comes out is always what a run from nothing reports."""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from coursekit import incremental
from coursekit.diagnostics import Diagnostic
from coursekit.engine import check
from coursekit.kept_rows import KEYS, ROWS, pairs
from coursekit.load import reader
from coursekit.load.clean import CleanDocuments
from coursekit.load.validate import validate
from coursekit.options import Options
from coursekit.project import Project, find_project
from coursekit.rules import REGISTRY, Context, Finding
from coursekit.rules.facts import FACTS, chapter_key
from coursekit.store import MemoryStore
from helpers import SharedVerdicts, generate

BUNDLED = Path(__file__).resolve().parent.parent / "course"
OPTIONS = Options(exec=False, formulas=False)  # no sympy, no programs: the verdict tests add them
WITH_PROGRAMS = Options(exec=True, formulas=False)
BOOK0 = "0/book.yaml"
LINKED_BY_TWO = "Vectors, matrices and the matrix product"  # 0.LA.01: linked by I.1 and I.2


class JsonStore(MemoryStore):
    """A memory store whose values go through JSON, as they do on disk."""

    def put(self, namespace: str, key: str, value: Any) -> None:
        super().put(namespace, key, json.loads(json.dumps(value)))


@pytest.fixture
def course(tmp_path: Path) -> Path:
    target = tmp_path / "course"
    shutil.copytree(BUNDLED, target)
    return target


def _project(course: Path) -> Project:
    return find_project(course, course)


def _full(course: Path) -> list[Diagnostic]:
    return check(_project(course), options=OPTIONS).diagnostics


def _kept(course: Path, store: MemoryStore) -> list[Diagnostic]:
    return check(_project(course), options=OPTIONS, store=store).diagnostics


# Which chapters each per-chapter rule was run on ------------------------------------------------


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[set[str]]]:
    """Rule code -> the chapter sets it was run on, for every per-chapter rule (the course-wide
    part of a rule, run on no chapter, is not counted: it is cheap and runs every time)."""
    seen: dict[str, list[set[str]]] = {}
    for code, rule in list(REGISTRY.items()):
        if rule.per_chapter is None or rule.check is None:
            continue

        def counting(
            ctx: Context, _check: Any = rule.check, _code: str = code
        ) -> Iterator[Finding]:
            chapters = {c.id for c in ctx.chapters()}
            if chapters or not ctx.course_part:
                seen.setdefault(_code, []).append(chapters)
            yield from _check(ctx)

        monkeypatch.setitem(REGISTRY, code, replace(rule, check=counting))
    return seen


def test_every_declared_fact_exists() -> None:
    scoped = [rule for rule in REGISTRY.values() if rule.per_chapter is not None]
    assert scoped, "no rule is kept per chapter"
    for rule in scoped:
        assert set(rule.per_chapter or ()) <= set(FACTS), rule.code


def test_nothing_changed_runs_no_per_chapter_rule(course: Path, calls: Any) -> None:
    store = JsonStore()
    first = _kept(course, store)
    assert calls and all(len(runs) == 1 for runs in calls.values())  # cold: once, every chapter
    calls.clear()
    assert _kept(course, store) == first == _full(course)
    calls.clear()
    _kept(course, store)
    assert calls == {}


def test_a_lesson_edit_re_runs_its_chapter_only(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    calls.clear()
    found = _kept(course, store)
    assert calls and all(runs == [{"II.2"}] for runs in calls.values()), calls
    assert found == _full(course)


class CountingStore(JsonStore):
    """A JsonStore that counts what is written, by namespace."""

    def __init__(self) -> None:
        super().__init__()
        self.puts: list[tuple[str, str]] = []

    def put(self, namespace: str, key: str, value: Any) -> None:
        self.puts.append((namespace, key))
        super().put(namespace, key, value)


def test_a_lesson_edit_writes_back_its_chapters_results_only(course: Path) -> None:
    """Regression: the kept results were one value for the whole course, written back whole
    after every edit (3.6 MB of JSON at 1,000 chapters, twice: the entry and the pack)."""
    store = CountingStore()
    _kept(course, store)
    chapters = check(_project(course), options=OPTIONS).course.chapters
    written = [key.rsplit(":", 1)[-1] for ns, key in store.puts if ns == "rules"]
    assert sorted(written) == sorted(chapters)  # cold: one entry per chapter
    store.puts.clear()
    assert _kept(course, store) == _full(course)
    assert [ns for ns, _ in store.puts if ns == "rules"] == []  # nothing changed: none
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    store.puts.clear()
    assert _kept(course, store) == _full(course)
    assert [key.rsplit(":", 1)[-1] for ns, key in store.puts if ns == "rules"] == ["II.2"]


def test_what_found_nothing_is_kept_as_no_row_and_each_key_once(course: Path) -> None:
    """Regression: each (rule, chapter) kept a pair [key, rows] of its own in the chapter's
    entry, found or not (~73,000 at 1,000 chapters: 4.6 MB of the pack, ~25 ms of each edit's
    run to unmarshal for keys a whole entry never asks). An entry keeps rows only of the rules
    that found something, and each distinct key once, for all the rules it decides."""
    store = MemoryStore()
    _kept(course, store)
    # (a chapter's entry holds each set of options' results: one set here)
    entries = [kept for (ns, _), v in store._data.items() if ns == "rules" for kept in v.values()]
    assert entries
    for entry in entries:
        assert all(entry[ROWS].values())  # no empty row kept
        by_key = json.loads(entry[KEYS])
        codes = [code for codes in by_key.values() for code in codes]
        assert len(codes) == len(set(codes)) == len(pairs(entry))
        assert len(by_key) < len(codes) / 2  # rules reading the same facts share a key
    kept_rows = sum(len(entry[ROWS]) for entry in entries)
    assert 0 < kept_rows < sum(len(pairs(entry)) for entry in entries) / 4
    # and what is kept reads back as it was: nothing changed runs no rule, reports the same
    assert _kept(course, store) == _full(course)


def test_a_run_without_a_store_keeps_and_keys_nothing(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run given no store (`check --no-cache`) is dropped whole: it computes no chapter key
    and encodes no finding for a later run (at 1,000 chapters those held ~8 MB), and finds
    what a run through a store finds."""
    from coursekit.rules.facts import chapter_key as real

    keyed: list[str] = []

    def counting(course_: Any, chapter: Any, facts: Any) -> str:
        keyed.append(chapter.id)
        return real(course_, chapter, facts)

    monkeypatch.setattr("coursekit.incremental.chapter_key", counting)
    alone = _full(course)
    assert keyed == []
    assert alone == _kept(course, JsonStore())
    assert keyed  # through a store, every chapter is keyed


def test_a_quiz_defect_is_found_and_then_cleared(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    lesson = next(p for p in course.rglob("*.md") if "quiz:" in p.read_text(encoding="utf-8"))
    original = lesson.read_text(encoding="utf-8")
    broken = re.sub(r"(?m)^(\s*)margin: .*\n", "", original, count=1)
    assert broken != original
    lesson.write_text(broken, encoding="utf-8")
    assert "CK604" in {d.code for d in _kept(course, store)}
    assert _kept(course, store) == _full(course)
    lesson.write_text(original, encoding="utf-8")
    assert "CK604" not in {d.code for d in _kept(course, store)}


def test_a_book0_title_rename_re_checks_the_chapters_linking_it(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    book0 = course / BOOK0
    text = book0.read_text(encoding="utf-8")
    assert text.count(LINKED_BY_TWO) == 1
    book0.write_text(text.replace(LINKED_BY_TWO, "Vectors and matrices"), encoding="utf-8")
    calls.clear()
    found = _kept(course, store)
    assert calls["CK303"] == [{"I.1", "I.2"}]  # the two chapters that link 0.LA.01
    assert "CK304" not in calls and "CK601" not in calls  # they read no Book 0 title
    assert "CK205" not in calls  # no symbol of a table moved
    assert found == _full(course)
    assert [d.path for d in found if d.code == "CK303"] == [
        "course/I/1-sequences/chapter.yaml",
        "course/I/2-the-vanilla-rnn/chapter.yaml",
    ]


def test_a_new_book0_id_re_runs_the_rules_reading_every_id(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    book0 = course / BOOK0
    text = book0.read_text(encoding="utf-8")
    book0.write_text(text.replace("id: 0.IT.01", "id: 0.IT.09", 1), encoding="utf-8")
    calls.clear()
    found = _kept(course, store)
    assert len(calls["CK301"]) == 1 and len(calls["CK301"][0]) == 6  # every chapter
    assert calls["CK303"] == [{"II.2"}]  # only II.2 links 0.IT.01
    assert found == _full(course)
    assert any(d.code == "CK301" and "0.IT.01" in d.message for d in found)


def test_a_configuration_change_keeps_nothing(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    calls.clear()
    check(_project(course), options=replace(OPTIONS, formulas=True), store=store)
    assert calls and all(len(runs[0]) == 6 for runs in calls.values())


# Random edits: the kept results never differ from a run from nothing ----------------------------

WORD = re.compile(r"\b[A-Za-z][A-Za-z0-9.]{2,}\b")


def _random_edit(rng: random.Random, course: Path, vocabulary: list[str]) -> None:
    files = sorted(p for p in course.rglob("*") if p.suffix in (".md", ".yaml"))
    path = rng.choice(files)
    lines = path.read_text(encoding="utf-8").split("\n")
    at = rng.randrange(len(lines))
    kind = rng.choice(["word", "word", "word", "drop", "double", "sentence"])
    if kind == "word" and (words := list(WORD.finditer(lines[at]))):
        match = rng.choice(words)
        line = lines[at]
        lines[at] = line[: match.start()] + rng.choice(vocabulary) + line[match.end() :]
    elif kind == "drop":
        del lines[at]
    elif kind == "double":
        lines.insert(at, lines[at])
    else:
        lines.insert(at, "Four questions follow; see also [x](chapter:I.9).")
    path.write_text("\n".join(lines), encoding="utf-8")


# (seed, edits, options): the programs run in the last two (the problem and owed rules' verdicts)
RANDOM_RUNS = [(s, 6, OPTIONS) for s in range(4)] + [(s, 4, WITH_PROGRAMS) for s in range(2)]


@pytest.mark.parametrize(("seed", "edits", "options"), RANDOM_RUNS)
def test_random_edits_give_what_a_full_run_gives(
    course: Path, seed: int, edits: int, options: Options
) -> None:
    _random_run(course, seed, edits, options)


# On the generated course, where every chapter has lessons, problems and exercises: what a
# run kept of the chapters an edit did not reach (their documents loaded deferred) included.
RANDOM_GENERATED = [(s, 5, OPTIONS) for s in range(2)] + [(0, 3, WITH_PROGRAMS)]


@pytest.mark.parametrize(("seed", "edits", "options"), RANDOM_GENERATED)
def test_random_edits_to_a_generated_course_give_what_a_full_run_gives(
    three_chapters: Path, tmp_path: Path, seed: int, edits: int, options: Options
) -> None:
    course = tmp_path / "course"
    shutil.copytree(three_chapters, course)
    _random_run(course, seed, edits, options)


def _random_run(course: Path, seed: int, edits: int, options: Options) -> None:
    rng = random.Random(seed)
    vocabulary = sorted(
        {w for p in course.rglob("*.yaml") for w in WORD.findall(p.read_text(encoding="utf-8"))}
    )
    store = JsonStore()
    check(_project(course), options=options, store=store)
    for _ in range(edits):
        _random_edit(rng, course, vocabulary)
        kept = check(_project(course), options=options, store=store).diagnostics
        assert kept == check(_project(course), options=options).diagnostics


def test_notation_results_follow_the_tables_in_scope(course: Path, calls: Any) -> None:
    store = JsonStore()
    _kept(course, store)
    book0 = course / BOOK0
    text = book0.read_text(encoding="utf-8")
    assert text.count("meaning: an eigenvalue of a square matrix") == 1  # 0.LA.02: I.3 links it
    book0.write_text(text.replace("an eigenvalue of a square matrix", "an eigenvalue"), "utf-8")
    calls.clear()
    found = _kept(course, store)
    assert calls["CK203"] == calls["CK204"] == [{"I.3"}]
    assert found == _full(course)
    manifest = course / "course.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("  - symbol: '\\tanh'\n", "  - symbol: '\\sigma'\n"), "utf-8")
    calls.clear()
    found = _kept(course, store)
    assert len(calls["CK204"]) == 1 and len(calls["CK204"][0]) == 6  # course.yaml: every chapter
    assert "CK601" not in calls
    assert found == _full(course)


@pytest.fixture
def broken_walker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The LaTeX walker raises on `\\broken` (as a reader bug would): a CK205 on demand."""
    from coursekit import latex_symbols

    real_walk = vars(latex_symbols)["_walk"]

    def walk(text: str) -> list[object]:
        if "\\broken" in text:
            raise ValueError("walker bug")
        return list(real_walk(text))

    monkeypatch.setattr(latex_symbols, "_walk", walk)
    latex_symbols._maths_of.cache_clear()
    latex_symbols._read_maths.cache_clear()
    yield
    latex_symbols._maths_of.cache_clear()
    latex_symbols._read_maths.cache_clear()


def test_a_finding_outside_every_chapter_is_kept_and_cleared(
    course: Path, calls: Any, broken_walker: None
) -> None:
    """CK205 also reads course.yaml's table: its finding there survives an edit elsewhere."""
    store = JsonStore()
    manifest = course / "course.yaml"
    original = manifest.read_text(encoding="utf-8")
    broken = original.replace("  - symbol: '\\tanh'\n", "  - symbol: '\\broken{m}'\n")
    assert broken != original
    manifest.write_text(broken, encoding="utf-8")
    first = _kept(course, store)
    assert [d.path for d in first if d.code == "CK205"] == ["course/course.yaml"]
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nAnd $x$ too.\n", "utf-8")
    calls.clear()
    found = _kept(course, store)
    assert calls["CK205"] == [{"II.2"}]
    assert found == _full(course)
    assert [d.path for d in found if d.code == "CK205"] == ["course/course.yaml"]
    manifest.write_text(original, encoding="utf-8")
    found = _kept(course, store)
    assert found == _full(course)
    assert not [d for d in found if d.code == "CK205"]


def test_a_link_into_another_chapter_follows_that_chapters_summary(
    course: Path, calls: Any
) -> None:
    store = JsonStore()
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    lesson.write_text(
        lesson.read_text(encoding="utf-8") + "\nSee [the lesson](lesson:I.1/zzz-later).\n", "utf-8"
    )
    first = _kept(course, store)
    assert [d.path for d in first if d.code == "CK501"] == [f"course/{lesson.relative_to(course)}"]
    chapter = course / "I/1-sequences/chapter.yaml"
    text = chapter.read_text(encoding="utf-8")
    planned = "items:\n  - planned: zzz-later\n    strand: basics\n    title: Later\n"
    chapter.write_text(text.replace("items:\n", planned, 1), encoding="utf-8")
    calls.clear()
    found = _kept(course, store)
    assert len(calls["CK501"]) == 1 and len(calls["CK501"][0]) == 6  # the summaries changed
    assert calls["CK601"] == [{"I.1"}]  # a lesson-only rule: the edited chapter alone
    assert "CK501" not in {d.code for d in found}
    assert found == _full(course)


# The verdict families (CK80x-CK824, CK814-CK822) per chapter, formulas on ------------------------

FORMULAS = Options(exec=False, formulas=True)
LESSON = "II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"


class VerdictStore(SharedVerdicts, JsonStore):
    """A fresh store for rule results (through JSON, as on disk) whose sympy verdicts are shared
    across tests: each test starts with nothing kept per chapter, without the sympy work."""


def _with_formulas(course: Path, store: MemoryStore | None = None) -> list[Diagnostic]:
    return check(_project(course), options=FORMULAS, store=store or VerdictStore()).diagnostics


VERDICT_RULES = {
    code
    for code, rule in REGISTRY.items()
    if rule.family in ("formulas", "numbers") and rule.check is not None
}


def test_the_verdict_families_are_kept_per_chapter() -> None:
    assert {REGISTRY[code].per_chapter is not None for code in VERDICT_RULES} == {True}


def test_a_lesson_edit_re_verifies_its_chapter_only(course: Path, calls: Any) -> None:
    store = VerdictStore()
    _with_formulas(course, store)
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    calls.clear()
    found = _with_formulas(course, store)
    assert set(calls) >= VERDICT_RULES
    assert all(runs == [{"II.2"}] for runs in calls.values()), calls
    assert found == _with_formulas(course)


@pytest.fixture
def sympy_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sympy jobs each batch the runner forked workers for held."""
    from coursekit.verify.isolation import run_isolated

    batches: list[int] = []

    def counting(jobs: Any, *args: Any, **kwargs: Any) -> Any:
        batches.append(len(jobs))
        return run_isolated(jobs, *args, **kwargs)

    monkeypatch.setattr("coursekit.verify.runner.run_isolated", counting)
    return batches


def test_a_claim_value_edit_is_found_there_and_nothing_else_re_runs(
    course: Path, calls: Any, sympy_jobs: list[int]
) -> None:
    store = VerdictStore()
    first = _with_formulas(course, store)
    assert "CK804" not in {d.code for d in first}
    lesson = course / LESSON
    text = lesson.read_text(encoding="utf-8")
    claim = re.search(r"(?m)^    value: (\d+)$", text)
    assert claim is not None
    wrong = int(claim.group(1)) + 1
    lesson.write_text(text[: claim.start(1)] + str(wrong) + text[claim.end(1) :], "utf-8")
    calls.clear()
    sympy_jobs.clear()
    found = _with_formulas(course, store)
    assert sympy_jobs == []  # judged against the number its expression came to before
    assert all(runs == [{"II.2"}] for runs in calls.values()), calls
    false = [d for d in found if d.code == "CK804"]
    assert false and {d.path for d in false} == {f"course/{LESSON}"}
    assert f"the claim says {wrong:,}" in false[0].message
    assert found == _with_formulas(course)
    lesson.write_text(text, "utf-8")  # back as it was: the kept result of before comes back
    calls.clear()
    assert _with_formulas(course, store) == first
    assert all(runs == [{"II.2"}] for runs in calls.values()), calls


def test_an_assumption_in_course_yaml_re_verifies_every_chapter(course: Path, calls: Any) -> None:
    store = VerdictStore()
    _with_formulas(course, store)
    manifest = course / "course.yaml"
    text = manifest.read_text(encoding="utf-8")
    entry = "  - symbol: 'O'\n"
    assert text.count(entry) == 1
    declared = "  - symbol: 'T'\n    meaning: a length\n    assume: [positive]\n"
    manifest.write_text(text.replace(entry, declared + entry, 1), "utf-8")
    calls.clear()
    found = _with_formulas(course, store)
    assert all(len(runs) == 1 and len(runs[0]) == 6 for c, runs in calls.items() if c[:3] == "CK8")
    assert "CK601" not in calls  # a lesson-only rule reads no notation
    assert found == _with_formulas(course)


def test_a_book0_title_rename_re_verifies_no_maths(course: Path, calls: Any) -> None:
    """The maths of a lesson inherits the notation of the entries its chapter links, not
    their titles: a renamed title re-runs the title rules there, and no verdict."""
    store = VerdictStore()
    _with_formulas(course, store)
    book0 = course / BOOK0
    text = book0.read_text(encoding="utf-8")
    book0.write_text(text.replace(LINKED_BY_TWO, "Vectors and matrices"), encoding="utf-8")
    calls.clear()
    found = _with_formulas(course, store)
    assert calls["CK303"] == [{"I.1", "I.2"}]
    assert not [code for code in calls if code[:3] == "CK8" or code in ("CK203", "CK204")]
    assert found == _with_formulas(course)


LINKED_NOTATION = (
    "      - symbol: 'I_n'\n        meaning: the identity matrix with n rows and n columns\n"
)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            lambda text: text.replace("with n rows and n columns", "of size n"), id="meaning"
        ),
        pytest.param(
            lambda text: text.replace(
                LINKED_NOTATION, LINKED_NOTATION + "        assume: [positive]\n"
            ),
            id="assumption",
        ),
        pytest.param(  # the table's lines move down: a finding placed there moves with them
            lambda text: text.replace(
                f"    title: {LINKED_BY_TWO}\n",
                f"    title: >-\n      {LINKED_BY_TWO}\n",
            ),
            id="moved",
        ),
    ],
)
def test_a_linked_notation_change_re_verifies_the_chapters_linking_it(
    course: Path, calls: Any, edit: Any, request: pytest.FixtureRequest
) -> None:
    edit_id = request.node.callspec.id
    store = VerdictStore()
    _with_formulas(course, store)
    book0 = course / BOOK0
    text = book0.read_text(encoding="utf-8")
    assert text.count(LINKED_NOTATION) == 1
    edited = edit(text)
    assert edited != text
    book0.write_text(edited, encoding="utf-8")
    calls.clear()
    found = _with_formulas(course, store)
    linking = {"I.1", "I.2"}
    for code in ("CK804", "CK814", "CK204"):
        (chapters,) = calls[code]
        if edit_id == "meaning":  # nothing else of Book 0 moved
            assert chapters == linking, code
        else:  # the lines below moved too: the chapters linking what is there run as well
            assert chapters >= linking, code
    assert found == _with_formulas(course)


def test_a_course_wide_notation_finding_is_reported_every_run(course: Path, calls: Any) -> None:
    """CK801 on course.yaml's table: the course-wide part runs apart, never kept per chapter."""
    store = VerdictStore()
    manifest = course / "course.yaml"
    text = manifest.read_text(encoding="utf-8")
    entry = "  - symbol: '\\mathrm{odd}'\n    meaning: an odd function\n    assume: [positive]\n"
    manifest.write_text(text.replace("notation:\n", "notation:\n" + entry, 1), "utf-8")
    first = _with_formulas(course, store)
    assert [d.path for d in first if d.code == "CK801"] == ["course/course.yaml"]
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    calls.clear()
    found = _with_formulas(course, store)
    assert calls["CK801"] == [{"II.2"}]
    assert found == _with_formulas(course)
    assert [d.path for d in found if d.code == "CK801"] == ["course/course.yaml"]


def test_a_chapter_whose_check_depended_on_the_clock_keeps_nothing(
    course: Path, calls: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.rules import _lesson_maths, facts

    real = _lesson_maths._verify_uncached
    marked: set[str] = set()

    def slow(ctx: Context, todo: list[Any]) -> None:
        real(ctx, todo)
        for planned in todo:  # as a timeout does: the chapter's findings are not facts
            marked.add(planned.maths.lesson.chapter_id)
            facts.unsteady(ctx.course, planned.maths.lesson.chapter_id)

    monkeypatch.setattr(_lesson_maths, "_verify_uncached", slow)
    store = VerdictStore()
    monkeypatch.setattr(store, "get", lambda namespace, key: MemoryStore.get(store, namespace, key))
    monkeypatch.setattr(
        store, "put", lambda namespace, key, value: MemoryStore.put(store, namespace, key, value)
    )
    _with_formulas(course, store)
    monkeypatch.setattr(_lesson_maths, "_verify_uncached", real)
    calls.clear()
    _with_formulas(course, store)
    assert marked and calls["CK804"] == [marked]  # nothing was kept there, all else was
    calls.clear()
    _with_formulas(course, store)
    assert "CK804" not in calls  # steady now: kept


def test_support_of_a_proposition_is_read_from_each_chapters_summary(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coursekit.rules import propositions

    read: list[str] = []
    real = propositions._supported

    def counting(course_: Any, chapter: Any) -> Any:
        read.append(chapter.id)
        return real(course_, chapter)

    monkeypatch.setattr(propositions, "_supported", counting)
    chapter = course / "I/1-sequences/chapter.yaml"
    chapter.write_text(
        chapter.read_text(encoding="utf-8").replace("status: draft", "status: published"), "utf-8"
    )
    store = JsonStore()
    first = _kept(course, store)
    assert "course/I/1-sequences/chapter.yaml" in {d.path for d in first if d.code == "CK405"}
    assert sorted(read) == ["I.1", "I.2", "I.3", "I.4", "II.1", "II.2"]
    lesson = course / LESSON  # another chapter's lesson now supports I.1's Prop. 1
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nAs I.1 Prop. 1 says.\n", "utf-8")
    read.clear()
    found = _kept(course, store)
    assert read == ["II.2"]  # the other chapters' summaries were kept
    assert not [d for d in found if d.code == "CK405" and "Prop. 1 " in d.message]
    assert found == _full(course)


# Rules still run on the whole course -----------------------------------------------------------

# What every edit still runs course-wide: the comparisons across chapters, each reading every
# chapter through its kept summary (`facts.summary`), never a chapter's files.
COMPARISONS = {"CK201", "CK405"}


@pytest.fixture
def whole(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The codes of the rules run over the whole course (not declared `per_chapter`), in order."""
    ran: list[str] = []
    for code, rule in list(REGISTRY.items()):
        if rule.per_chapter is not None or rule.check is None:
            continue

        def counting(ctx: Context, _check: Any = rule.check, _code: str = code) -> Any:
            ran.append(_code)
            yield from _check(ctx)

        monkeypatch.setitem(REGISTRY, code, replace(rule, check=counting))
    return ran


def test_every_rule_is_kept_per_chapter_but_the_comparisons() -> None:
    course_wide = {c for c, r in REGISTRY.items() if r.check is not None and r.per_chapter is None}
    assert course_wide == COMPARISONS


def _with_programs(course: Path, store: MemoryStore | None = None) -> list[Diagnostic]:
    return check(_project(course), options=WITH_PROGRAMS, store=store or JsonStore()).diagnostics


def test_a_lesson_edit_re_runs_its_chapter_and_the_comparisons_only(
    course: Path, calls: Any, whole: list[str]
) -> None:
    """With the programs run: the problem (CK9xx), owed (CK70x), reading (CK608, CK707) and
    naming (CK108, CK111, CK302) rules re-run on the edited chapter alone."""
    store = JsonStore()
    _with_programs(course, store)
    lesson = course / LESSON
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    calls.clear()
    whole.clear()
    found = _with_programs(course, store)
    assert set(whole) <= COMPARISONS
    for code in ("CK901", "CK907", "CK701", "CK706", "CK608", "CK707", "CK108", "CK111", "CK302"):
        assert calls[code] == [{"II.2"}], code
    assert found == _with_programs(course)


def test_a_problem_edit_re_judges_its_chapter_only(course: Path, calls: Any) -> None:
    store = JsonStore()
    first = _with_programs(course, store)
    assert "CK907" not in {d.code for d in first}
    problem = course / "II/2-from-recurrence-to-attention/problems/crossing-with-narrow-keys"
    manifest = problem / "problem.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert text.count("  value: 1024\n") == 1
    manifest.write_text(text.replace("  value: 1024\n", "  value: 1025\n"), "utf-8")
    calls.clear()
    found = _with_programs(course, store)
    assert calls["CK907"] == [{"II.2"}]
    assert any(d.code == "CK907" and "crossing-with-narrow-keys" in d.path for d in found)
    assert found == _with_programs(course)


# What a fresh run validates ---------------------------------------------------------------------

DOCUMENTS = ("LessonFrontMatter", "WorkedProblem", "Exercise")


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(model kind, file) of every document validated, at the load or later."""
    seen: list[tuple[str, str]] = []
    real = validate

    def counting(kind: Any, data: Any, source: Any) -> Any:
        seen.append((kind.__name__, source.path))
        return real(kind, data, source)

    monkeypatch.setattr(reader, "validate", counting)
    return seen


@pytest.fixture(scope="module")
def three_chapters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """benchmarks/generate.py's course at three chapters, each one with lessons, problems and
    exercises (the bundled course has them in II.2 alone)."""
    return generate(3, tmp_path_factory.mktemp("generated"))


@pytest.mark.parametrize("options", [OPTIONS, WITH_PROGRAMS], ids=["rules", "programs"])
def test_a_lesson_edit_validates_the_documents_of_its_chapter_only(
    three_chapters: Path, tmp_path: Path, validated: list[tuple[str, str]], options: Options
) -> None:
    """Regression (#20): a fresh run after a one-lesson edit validated every lesson, problem
    and exercise of the course again from the cache (~17% of such a run at 1,000 chapters),
    though the rules read only the edited chapter's."""
    course = tmp_path / "course"
    shutil.copytree(three_chapters, course)
    store = JsonStore()
    check(_project(course), options=options, store=store)
    lesson = sorted(course.rglob("model-width.md"))[1]
    chapter = lesson.parent.parent.relative_to(course.parent).as_posix() + "/"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    validated.clear()
    found = check(_project(course), options=options, store=store).diagnostics
    documents = sorted({path for kind, path in validated if kind in DOCUMENTS})
    assert any(path.endswith("/model-width.md") for path in documents)
    assert all(path.startswith(chapter) for path in documents), (chapter, documents)
    assert found == check(_project(course), options=options).diagnostics


def test_a_record_vouching_for_a_broken_document_is_told_and_then_dropped(course: Path) -> None:
    """A damaged cache that says a broken lesson validated: the rule reading it reports that
    (CK000, naming the file and the way out), and the next run reports the lesson itself."""
    store = JsonStore()
    _kept(course, store)
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    broken = lesson.read_text(encoding="utf-8").replace("title:", "title: [unclosed", 1)
    lesson.write_text(broken, encoding="utf-8")
    entry = "1:course/II/2-from-recurrence-to-attention"
    record = store.get("clean", entry)
    assert isinstance(record, dict)
    rel = "course/II/2-from-recurrence-to-attention/lessons/model-width.md"
    record[rel][0] = hashlib.sha256(broken.encode("utf-8")).hexdigest()  # the damage
    store.put("clean", entry, record)
    stale = [d for d in _kept(course, store) if d.code == "CK000"]
    assert stale and all("model-width.md was recorded as valid" in d.message for d in stale)
    assert "delete the .coursekit_cache folder" in stale[0].message
    assert _kept(course, store) == _full(course)
    assert any(d.path == rel and d.code != "CK000" for d in _full(course))


def test_an_unchanged_chapters_entry_is_taken_whole(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (#20): every rule's key of every chapter was worked out and compared on each
    edit (~0.1 s at 1,000 chapters); a chapter the edit did not reach is one key now."""
    store = JsonStore()
    _kept(course, store)
    keyed: dict[str, int] = {}
    real = chapter_key

    def counting(course_: Any, chapter: Any, facts: Any) -> str:
        keyed[chapter.id] = keyed.get(chapter.id, 0) + 1
        return real(course_, chapter, facts)

    monkeypatch.setattr(incremental, "chapter_key", counting)
    lesson = course / "II/2-from-recurrence-to-attention/lessons/model-width.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nOne more sentence.\n", "utf-8")
    assert _kept(course, store) == _full(course)
    assert keyed["II.2"] > 1
    assert {c: n for c, n in keyed.items() if c != "II.2"} == dict.fromkeys(
        set(keyed) - {"II.2"}, 1
    )
    assert len(keyed) > 2


def test_a_rule_that_crashed_runs_again_where_it_crashed(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash is reported, never kept: the next run, with nothing changed, runs that rule
    again on every chapter, and then reports what a run from nothing does."""
    code, rule = next(
        (code, rule)
        for code, rule in REGISTRY.items()
        if rule.per_chapter is not None and rule.check is not None and not rule.course_part
    )
    assert rule.check is not None
    original = rule.check

    def crashing(ctx: Context) -> Iterator[Finding]:
        raise RuntimeError("a bug")
        yield from original(ctx)

    ran: list[set[str]] = []

    def counting(ctx: Context) -> Iterator[Finding]:
        ran.append({chapter.id for chapter in ctx.chapters()})
        yield from original(ctx)

    store = JsonStore()
    monkeypatch.setitem(REGISTRY, code, replace(rule, check=crashing))
    assert any(d.code == "CK000" for d in _kept(course, store))
    monkeypatch.setitem(REGISTRY, code, replace(rule, check=counting))
    again = _kept(course, store)
    assert ran and ran[0] == set(check(_project(course), options=OPTIONS).course.chapters)
    assert again == _full(course)


def test_a_run_without_a_store_records_no_clean_document(
    three_chapters: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check --no-cache` keeps nothing for a later run: it hashes no text for the record of
    clean documents (the whole course's texts, ~23 MB at 1,000 chapters)."""
    course = tmp_path / "course"
    shutil.copytree(three_chapters, course)
    hashed: list[str] = []
    real = CleanDocuments._digest

    def counting(self: CleanDocuments, path: str, text: str) -> str:
        hashed.append(path)
        return real(self, path, text)

    monkeypatch.setattr(CleanDocuments, "_digest", counting)
    alone = _full(course)
    assert hashed == []
    assert alone == _kept(course, JsonStore())
    assert hashed  # through a store, each document's text is recorded


def _sets(store: MemoryStore) -> list[int]:
    """How many sets of options each chapter's entry holds results for."""
    return [len(entry) for (ns, _), entry in store._data.items() if ns == "rules"]


def test_each_entry_keeps_the_sets_of_options_used_within_a_week(
    course: Path, monkeypatch: pytest.MonkeyPatch, calls: Any
) -> None:
    """Two sets of options used in turn (here: without and with the programs) each keep their
    results in the chapter's one entry, so that neither replaces the other's in the pack
    (tests/test_cache_pack.py); a set not used for a week is dropped from every entry."""
    store = JsonStore()
    kept = {
        options: check(_project(course), options=options, store=store).diagnostics
        for options in (OPTIONS, WITH_PROGRAMS)
    }
    assert set(_sets(store)) == {2}
    calls.clear()
    for options in (OPTIONS, WITH_PROGRAMS):  # each set's results kept: no rule runs
        assert check(_project(course), options=options, store=store).diagnostics == kept[options]
    assert calls == {}
    monkeypatch.setattr(incremental, "USED_WITHIN_NS", 0)  # (a week has passed)
    assert _kept(course, store) == kept[OPTIONS]
    assert set(_sets(store)) == {1}
    assert calls == {}  # (dropping the other set ran no rule)
