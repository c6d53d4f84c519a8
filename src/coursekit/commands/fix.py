"""`coursekit fix [--diff] [PATHS]`: apply the safe fixes (or show them), then report what is left.

Exit codes, like ruff: 0 when nothing is left to fix and no error remains; 1 when errors remain
that no fix can repair (or, with `--diff`, when there is something to fix); 2 on a usage error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from coursekit.authoring.changes import ChangeError
from coursekit.authoring.fixes import Fixer, fixer_switch
from coursekit.engine import check
from coursekit.load import load_course
from coursekit.project import Project, relative_paths


def run(
    project: Project,
    paths: Sequence[Path],
    show_diff: bool,
    out: TextIO,
    use_cache: bool = True,
) -> int:
    rel = relative_paths(project.root, paths)
    loaded = load_course(project.course_dir, project.root)
    fixer = Fixer(project.root, loaded, project.config, rel, fixer_switch(project.config))
    changes = fixer.run()
    for note in changes.notes:
        out.write(f"note: {note}\n")
    effective = changes.effective
    if show_diff:
        out.write(changes.diff())
        if effective:
            out.write(f"Would fix {fixer.fixed} issue(s) in {len(effective)} file(s).\n")
            return 1
        return _remaining(project, rel, out, fixed=False, use_cache=use_cache)
    if effective:
        try:
            written = changes.apply()
        except (ChangeError, OSError) as exc:
            out.write(f"coursekit fix: {exc}\n")
            return 2
        out.write(f"Fixed {fixer.fixed} issue(s) in {len(written)} file(s):\n")
        for path in written:
            out.write(f"  {changes.rel(path)}\n")
    return _remaining(project, rel, out, fixed=bool(effective), use_cache=use_cache)


def _remaining(
    project: Project, rel: Sequence[str], out: TextIO, fixed: bool, use_cache: bool
) -> int:
    """What is left for the author, judged as `check` judges it: through the project's cache,
    so verdicts `check` already has (sympy, programs) are not computed again after a fix."""
    if not use_cache:
        result = check(project, rel)
    else:
        from coursekit import cache
        from coursekit.cache_pack import PackedStore

        store = PackedStore(cache.DiskStore(project.root))
        result = check(project, rel, store=store)
        store.save()
    if result.errors:
        out.write(
            f"{result.errors} error(s) remain that `coursekit fix` cannot repair; "
            "run `coursekit check` to see them.\n"
        )
        return 1
    if not fixed:
        out.write("Nothing to fix.\n")
    return 0
