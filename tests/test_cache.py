"""The cache: a disk result store, parsed documents, and whole-run replay that is never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import coursekit
from coursekit import cache, cache_env, cache_stats, cache_tree, warm_stamps
from coursekit.cli import main
from coursekit.load.parsecache import cached_parse
from coursekit.load.yamlparse import parse_yaml
from coursekit.load.yamlsafe import LoadError
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.rules import REGISTRY
from coursekit.store import MemoryStore
from helpers import generate

REPO = Path(__file__).resolve().parent.parent


# The result store ---------------------------------------------------------------------------


def test_store_round_trip_and_folder_markers(tmp_path: Path) -> None:
    store = cache.DiskStore(tmp_path, env={"coursekit": "1"})
    assert store.get("sympy", "k") is None
    store.put("sympy", "k", {"verdict": "holds", "values": [1, 2.5, None]})
    assert store.get("sympy", "k") == {"verdict": "holds", "values": [1, 2.5, None]}
    assert store.get("sympy", "other") is None
    assert store.get("exec", "k") is None  # namespaces are separate
    root = tmp_path / ".coursekit_cache"
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (
        (root / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert not _temporaries(root)  # atomic writes leave no temporaries


def _temporaries(root: Path) -> list[Path]:
    """What coursekit.atomic leaves behind when a write does not finish: `.NAME.XXXX.tmp`."""
    return [p for p in root.rglob(".*.tmp") if p.is_file()]


def test_the_leftover_check_sees_what_the_atomic_writer_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A replace that never happens leaves the writer's temporary in place: the check must see it
    # (it used to look for `.tmp-*`, a name the writer never uses, so it could not fail).
    from coursekit import atomic

    monkeypatch.setattr(os, "replace", lambda src, dst: None)  # atomic calls os.replace
    atomic.atomic_write_bytes(tmp_path / "entry.json", b"{}", durable=False)
    assert [p.name.startswith(".entry.json.") for p in _temporaries(tmp_path)] == [True]


def test_store_keys_include_the_environment(tmp_path: Path) -> None:
    cache.DiskStore(tmp_path, env={"sympy": "1.14"}).put("sympy", "k", 1)
    assert cache.DiskStore(tmp_path, env={"sympy": "1.14"}).get("sympy", "k") == 1
    assert cache.DiskStore(tmp_path, env={"sympy": "1.15"}).get("sympy", "k") is None
    env = cache.environment()
    for name in ("coursekit", "python", "sympy", "numpy", "coursekit_source"):
        assert env[name]
    probe = (
        "import sys; from coursekit import cache; cache.environment(); "
        "print(sorted(m for m in ('sympy', 'numpy', 'pydantic') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert shown.stdout.strip() == "[]", shown.stderr  # versions come without importing


def test_one_interpreter_is_one_environment_however_it_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python`, `python3` and `python3.11` of one environment are one interpreter: a result
    one computed is the others' (each spelling had its own cache, so switching between
    `coursekit` and `python -m coursekit` checked the whole course again)."""
    named = cache.environment()
    alias = tmp_path / "another-name-for-python"
    alias.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(alias))
    assert cache.environment() == named
    copy = tmp_path / "a-copy-of-python"
    copy.write_bytes(b"not the same file")
    monkeypatch.setattr(sys, "executable", str(copy))
    assert cache.environment()["executable"] != named["executable"]
    monkeypatch.setattr(sys, "executable", str(alias))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "another-environment"))
    assert cache.environment() != named  # the same binary in another environment: its own


def _spellings() -> tuple[str, str] | None:
    """Two names of the running interpreter in its own folder (a venv has python, python3 and
    python3.X), or None when this installation has only one."""
    here = Path(sys.executable)
    real = os.path.realpath(here)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    names = [n for n in ("python", "python3", version) if (here.parent / n).exists()]
    same = [str(here.parent / n) for n in names if os.path.realpath(here.parent / n) == real]
    return (same[0], same[1]) if len(same) >= 2 else None


def test_another_spelling_of_the_interpreter_replays_the_run(tiny_course: Path) -> None:
    spellings = _spellings()
    if spellings is None:
        pytest.skip(f"{sys.executable} has no second name in its folder")
    first, second = spellings
    command = ["-m", "coursekit", "check", "--course", str(tiny_course)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    ran = subprocess.run(
        [first, *command], cwd=tiny_course.parent, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    again = subprocess.run(
        [second, "-X", "importtime", *command],
        cwd=tiny_course.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (again.stdout, again.returncode) == (ran.stdout, ran.returncode)
    imported = {line.rsplit("|", 1)[1].strip() for line in again.stderr.splitlines() if "|" in line}
    assert "coursekit.commands.check" in imported, "no import times were recorded"
    assert "coursekit.rules" not in imported, f"{second} checked again what {first} had checked"


def test_library_versions_without_importing(tmp_path: Path) -> None:
    from importlib.metadata import version

    assert cache.library_version("sympy") == version("sympy")
    assert cache.library_version("numpy") == version("numpy")
    assert cache.library_version("no-such-distribution-here") == "absent"


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"salt": "x"}', b"\x00\xff", b"[]"])
def test_corrupted_entries_read_as_misses(tmp_path: Path, damage: bytes) -> None:
    store = cache.DiskStore(tmp_path, env={"coursekit": "1"})
    store.put("exec", "k", 42)
    (entry,) = (tmp_path / ".coursekit_cache").rglob("*.json")
    entry.write_bytes(damage)
    assert store.get("exec", "k") is None
    store.put("exec", "k", 43)
    assert store.get("exec", "k") == 43


def test_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".coursekit_cache").write_text("a file where the folder should be")
    store = cache.DiskStore(tmp_path, env={})
    store.put("exec", "k", 1)  # no exception
    assert store.get("exec", "k") is None


def test_clean_removes_only_our_folder(tmp_path: Path) -> None:
    cache.DiskStore(tmp_path, env={}).put("n", "k", 1)
    assert cache.clean(tmp_path) is True
    assert not (tmp_path / ".coursekit_cache").exists()
    assert cache.clean(tmp_path) is False
    (tmp_path / ".coursekit_cache").mkdir()
    with pytest.raises(OSError):
        cache.clean(tmp_path)


# Parsed documents ---------------------------------------------------------------------------


def test_cached_parse_gives_what_the_parser_gives(tmp_path: Path) -> None:
    store = cache.DiskStore(tmp_path, env={})
    text = "a: 1\nb: [x, {c: 2.5}]\n'0': yes\nd: ~\n"
    direct_data, direct_source = parse_yaml(text, "f.yaml", 1)
    first = cached_parse(store, text, "f.yaml", 1)
    again = cached_parse(cache.DiskStore(tmp_path, env={}), text, "g.yaml", 1)
    for data, source in (first, again):
        assert data == direct_data
        assert source.values == direct_source.values
        assert source.keys == direct_source.keys
        assert source.line_offset == 1
    assert again[1].path == "g.yaml"


def test_cached_parse_keeps_errors(tmp_path: Path) -> None:
    store = cache.DiskStore(tmp_path, env={})
    for _ in range(2):
        with pytest.raises(LoadError) as raised:
            cached_parse(store, "a: [1, 2\n", "f.yaml")
        assert raised.value.code and raised.value.line >= 1


# Whole runs: never stale ----------------------------------------------------------------------


class Runs:
    """`coursekit check` in-process, with and without the cache, in a project folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def check(self, *extra: str) -> str:
        cwd = Path.cwd()
        os.chdir(self.root)
        try:
            result = self.runner.invoke(main, ["check", "--format", "json", *extra])
        finally:
            os.chdir(cwd)
        assert result.exit_code in (0, 1), result.output
        return result.output


@pytest.fixture
def project(tmp_path: Path) -> Path:
    generate(2, tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.coursekit]\n", encoding="utf-8")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


CHAPTER = "course/I/1-synthetic-chapter-1"

CHANGES: dict[str, tuple[Callable[[Path], object], str | None]] = {
    "yaml manifest": (
        lambda root: _edit(root / CHAPTER / "chapter.yaml", "maturity: M2", "maturity: M9"),
        None,
    ),
    "lesson body": (
        lambda root: _edit(
            root / CHAPTER / "lessons/model-width.md",
            "The next step is in",
            "See [nowhere](lesson:I.1/no-such-lesson). The next step is in",
        ),
        None,
    ),
    "lesson formula": (
        lambda root: _edit(
            root / CHAPTER / "lessons/counting-multiplications.md",
            "step: d_h**2 + d_h*d_x",
            "step: d_h**2 + 2*d_h*d_x",
        ),
        "CK8",
    ),
    "problem program": (
        lambda root: _edit(
            root / CHAPTER / "problems/crossing/solution.py",
            "return int(T[np.argmin(gap)])",
            "return int(T[np.argmin(gap)]) + 1",
        ),
        "CK9",
    ),
    "problem manifest": (
        lambda root: _edit(
            root / CHAPTER / "problems/crossing/problem.yaml", "supports: [1]", "supports: [7]"
        ),
        None,
    ),
    "file added": (
        lambda root: (root / CHAPTER / "lessons/stray.md").write_text(
            "---\ntitle: Stray\nstrand: basics\nreading_time: 1\n---\nBody.\n"
        ),
        None,
    ),
    "file removed": (lambda root: (root / CHAPTER / "figures/path-length.svg").unlink(), None),
    # every file keeps its stamp (inode, times, size); only the paths change
    "file renamed": (
        lambda root: (root / CHAPTER / "lessons/model-width.md").rename(
            root / CHAPTER / "lessons/model-width-renamed.md"
        ),
        None,
    ),
    "folder renamed": (
        lambda root: (root / CHAPTER).rename(root / CHAPTER.replace("chapter-1", "renamed")),
        None,
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_kind_of_input_invalidates_the_run(project: Path, change: str) -> None:
    apply, family = CHANGES[change]
    # every family named here exists: a missing one fails rather than skips
    assert not family or any(code.startswith(family) for code in REGISTRY), family
    runs = Runs(project)
    before = runs.check()
    assert runs.check() == before  # replayed
    apply(project)
    after = runs.check()
    assert after == runs.check("--no-cache")  # the truth, computed from scratch
    assert after != before, f"{change}: the diagnostics did not change"
    assert runs.check() == after  # and the new result is replayed in turn


@pytest.mark.parametrize("change", ["lesson body", "file renamed", "folder renamed"])
def test_a_lookup_whose_digest_a_child_took_is_as_exact(
    project: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """From 8,192 files, after the warm path saw a change the last run did not, a forked child
    takes the lookup's digest while the run imports what a miss needs and reads the pack (#20);
    here from one file. It finds each change, and what it wrote back serves the next run."""
    monkeypatch.setattr(cache_stats, "worth_a_child", lambda files: files >= 1)
    monkeypatch.setattr(warm_stamps, "newest_change_ns", 2**62)  # the warm path saw a change
    adopted = _returns(monkeypatch, cache_tree.TreeDigest, "_adopted")
    runs = Runs(project)
    before = runs.check()
    assert runs.check() == before
    CHANGES[change][0](project)
    adopted.clear()
    after = runs.check()
    assert adopted == [True]  # the child's digest, not one taken here
    assert after == runs.check("--no-cache") != before
    assert runs.check() == after


def test_config_change_invalidates_the_run(project: Path) -> None:
    runs = Runs(project)
    CHANGES["yaml manifest"][0](project)
    broken = runs.check()
    codes = {d["code"] for d in json.loads(broken)["diagnostics"]}
    assert codes
    (project / "pyproject.toml").write_text(
        "[tool.coursekit]\nignore = [" + ", ".join(f'"{c}"' for c in sorted(codes)) + "]\n"
    )
    quiet = runs.check()
    assert quiet != broken
    assert quiet == runs.check("--no-cache")


def test_version_and_options_are_in_the_key(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = Runs(project)
    runs.check()
    proj = find_project(project)

    def lookup(options: Options, fmt: str = "json") -> object:
        return cache.RunCache.for_check(proj, [], fmt, False, options).lookup()

    options = Options(exec=True, jobs=2)
    assert lookup(options) is not None
    assert lookup(replace(options, jobs=7)) is not None  # how fast is not what
    assert lookup(replace(options, progress=lambda *_: None)) is not None
    assert lookup(replace(options, exec=False)) is None
    assert lookup(replace(options, formulas=False)) is None
    assert lookup(options, "text") is None
    monkeypatch.setattr(coursekit, "__version__", "99.0.0")
    assert lookup(options) is None
    monkeypatch.undo()
    monkeypatch.setattr(cache_env, "_versions_memo", {"": "", "sympy": "0.0.1"})
    assert lookup(options) is None


def test_no_cache_neither_reads_nor_writes(project: Path) -> None:
    Runs(project).check("--no-cache")
    assert not (project / ".coursekit_cache").exists()


def test_clean_command(project: Path) -> None:
    runs = Runs(project)
    runs.check()
    assert (project / ".coursekit_cache/CACHEDIR.TAG").is_file()
    cwd = Path.cwd()
    os.chdir(project)
    try:
        result = runs.runner.invoke(main, ["clean"])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    assert not (project / ".coursekit_cache").exists()


def test_racily_clean_files_are_hashed_again(project: Path) -> None:
    """An edit that keeps size and mtime (same tick) is still seen: recent files are re-hashed."""
    runs = Runs(project)
    before = runs.check()
    lesson = project / CHAPTER / "lessons/model-width.md"
    stat = lesson.stat()
    text = lesson.read_text()
    edited = text.replace("The next step is in", "The next step iz in", 1)
    assert len(edited) == len(text)
    lesson.write_text(edited)
    os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime and size as before
    after = runs.check()
    assert after == runs.check("--no-cache")
    assert before != after or "iz" not in after  # the edit reached the checker


def test_an_edit_with_size_and_mtime_put_back_is_seen_when_not_racy(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`touch -d` back after a same-size edit, long after the stat table was written: the
    change time (which no user can set) differs, so the file is hashed again."""
    monkeypatch.setattr(cache_stats, "RACY_NS", -(10**18))  # nothing is racily clean
    runs = Runs(project)
    before = runs.check()
    assert runs.check() == before
    chapter = project / CHAPTER / "chapter.yaml"
    stat = chapter.stat()
    _edit(chapter, "maturity: M2", "maturity: M9")
    os.utime(chapter, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (chapter.stat().st_size, chapter.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    after = runs.check()
    assert after != before
    assert after == runs.check("--no-cache")


def test_a_tree_with_a_symlink_is_never_replayed(project: Path) -> None:
    runs = Runs(project)
    link = project / CHAPTER / "figures/link.svg"
    link.symlink_to(project / CHAPTER / "figures/path-length.svg")
    runs.check()
    proj = find_project(project)
    assert (
        cache.RunCache.for_check(proj, [], "json", False, Options(exec=True, jobs=2)).lookup()
        is None
    )


def _returns(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[Any]:
    """What each call of the method `owner.name` returns from now on (it still runs)."""
    real = getattr(owner, name)
    returned: list[Any] = []

    def spied(self: object, *args: object, **kwargs: object) -> Any:
        returned.append(real(self, *args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(owner, name, spied)
    return returned


@pytest.mark.parametrize("racy", [True, False])
def test_an_edit_the_load_reads_is_not_stored_under_the_old_key(
    project: Path, monkeypatch: pytest.MonkeyPatch, racy: bool
) -> None:
    """The lookup digested one tree, the author saved another before the load read the file:
    the output belongs to neither tree, so it must not be replayed. With `racy` the edit keeps
    the file's size and mtime (a same-tick save): only its content says it changed."""
    if not racy:
        monkeypatch.setattr(cache_stats, "RACY_NS", -(10**18))
    runs = Runs(project)
    runs.check()
    lesson = project / CHAPTER / "lessons/model-width.md"
    _edit(lesson, "The next step is in", "The next step iz in")  # a miss: the run runs
    lookup = cache.RunCache.lookup

    def lookup_then_edit(
        self: cache.RunCache,
        meanwhile: Callable[[], object] | None = None,
        changed_ns: int | None = None,
    ) -> tuple[str, int] | None:
        hit = lookup(self, meanwhile, changed_ns)
        stat = lesson.stat()
        _edit(lesson, "The next step iz in", "The next step iq in")  # the file the load reads
        os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        return hit

    monkeypatch.setattr(cache.RunCache, "lookup", lookup_then_edit)
    stored = _returns(monkeypatch, cache.RunCache, "record")
    runs.check()
    monkeypatch.undo()
    assert True not in stored
    assert runs.check() == runs.check("--no-cache")  # the edit is seen, not the stale run


def test_an_edit_after_the_load_read_the_tree_is_seen_by_the_next_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run checked the tree the lookup digested (the edited chapter.yaml's text came
    from the pack): its output is that tree's, kept under that tree's key, and the next run
    sees the new content."""
    runs = Runs(project)
    runs.check()
    chapter = project / CHAPTER / "chapter.yaml"
    lesson = project / CHAPTER / "lessons/model-width.md"
    before = chapter.read_text(encoding="utf-8")
    record = cache.RunCache.record

    def edit_then_record(self: cache.RunCache, output: str, code: int) -> bool:
        _edit(chapter, "maturity: M2", "maturity: M9")
        return record(self, output, code)

    _edit(lesson, "The next step is in", "The next step iz in")  # a miss: the run runs
    monkeypatch.setattr(cache.RunCache, "record", edit_then_record)
    edited_lesson = runs.check()
    monkeypatch.undo()
    assert runs.check() == runs.check("--no-cache")  # the chapter's edit is seen
    chapter.write_text(before, encoding="utf-8")
    assert runs.check() == edited_lesson  # and the tree the run checked was kept as it was


def test_a_run_that_read_the_digested_tree_is_recorded_without_a_second_stat(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = Runs(project)
    runs.check()
    _edit(project / CHAPTER / "lessons/model-width.md", "The next step is in", "Next is in")
    walks = _returns(monkeypatch, cache_tree.TreeDigest, "_walk")
    looks = _returns(monkeypatch, cache_tree.TreeDigest, "_from_table")
    edited = runs.check()
    assert len(walks) + len(looks) == 1  # the lookup's: the record does not stat the tree again
    stored = list((project / cache.CACHE_DIR / "v1" / "runs").iterdir())
    monkeypatch.undo()
    replays = _returns(monkeypatch, cache.RunCache, "lookup")
    assert runs.check() == edited
    assert replays and replays[0] is not None, stored  # the edited run was recorded


def test_a_miss_writes_the_stat_table_before_the_run_and_holds_no_row_through_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the table was written when the run was recorded, and its ~28,000 rows were
    held through the whole run (~10 MB of a cold run's peak at 1,000 chapters)."""
    import coursekit.engine

    runs = Runs(project)
    runs.check()
    lesson = project / CHAPTER / "lessons/model-width.md"
    _edit(lesson, "The next step is in", "Next is in")  # a miss: the run runs
    trees = _returns(monkeypatch, cache.RunCache, "_digest")
    load_context = coursekit.engine.load_context
    seen: dict[str, Any] = {}

    def looking(*args: Any, **kwargs: Any) -> Any:
        table = cache_tree.read_table(project / cache.CACHE_DIR / "v1" / cache_tree.STAT_TABLE)
        assert table is not None
        rel = lesson.relative_to(project / "course").as_posix()
        seen["row"] = table["files"][rel]
        tree = trees[0][1]
        seen["rows held"] = len(tree._fresh) + len(tree._folder_rows)
        seen["files"] = len(tree.files)
        return load_context(*args, **kwargs)

    monkeypatch.setattr(coursekit.engine, "load_context", looking)
    edited = runs.check()
    monkeypatch.undo()
    st = lesson.stat()
    assert seen["row"][:3] == [st.st_mtime_ns, st.st_ctime_ns, st.st_size]  # already written
    assert seen["rows held"] == 0 and seen["files"] > 0  # the digest stays, its rows do not
    assert runs.check() == edited == runs.check("--no-cache")


def test_a_layer_forgets_a_namespace_in_memory_here_and_below() -> None:
    forgotten: list[str] = []

    class Below(MemoryStore):
        def forget(self, namespace: str) -> None:
            forgotten.append(namespace)

    below = Below()
    layered = cache.Layered(below)
    layered.put("yaml", "k", 1)
    layered.put("verdicts", "k", 2)
    layered.forget("yaml")
    assert ("yaml", "k") not in layered.memory
    assert layered.memory[("verdicts", "k")] == 2
    assert forgotten == ["yaml"]
    assert layered.get("yaml", "k") == 1  # still below: only memory let go of it
    cache.Layered(MemoryStore()).forget("yaml")  # a store below with nothing to forget
