"""What the pre-commit hooks add to a commit that touches one lesson's prose.

In a temporary git repository holding a copy of the course, with this repository's coursekit
hooks installed (`repo: local`, `language: system`, entry `<this python> -m coursekit ...`),
times `git commit` of a one-sentence edit to a lesson with the hooks (warm: one commit first,
unmeasured) and with `git commit --no-verify`, the two interleaved. Prints the medians and the
difference; the target is under one second end to end, pre-commit's own start-up included.

    python benchmarks/hook_latency.py [--runs 5] [--lesson course/.../lessons/x.md]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import yaml  # type: ignore[import-untyped]  # pre-commit's own dependency
except ImportError:  # an install without pre-commit (`pip install .`, not `.[test]`)
    sys.exit(f"{sys.executable}: no PyYAML here; this row needs pre-commit: pip install pre-commit")

REPO = Path(__file__).resolve().parents[1]
LESSON = "course/II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"
TARGET_SECONDS = 1.0


def local_hooks() -> str:
    """This repository's coursekit hooks, each calling `sys.executable -m coursekit ...`."""
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = []
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            if hook["id"].startswith("coursekit-"):
                words = shlex.split(hook["entry"])
                last = len(words) - 1 - words[::-1].index("coursekit")
                entry = shlex.join([sys.executable, "-m", "coursekit", *words[last + 1 :]])
                hooks.append({**hook, "entry": entry, "language": "system"})
    dumped: str = yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)
    return dumped


def pre_commit() -> list[str]:
    beside = Path(sys.executable).with_name("pre-commit")
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "pre_commit"]


class Repo:
    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
        (home / "gitconfig").write_text("", encoding="utf-8")
        self.env.update(
            PRE_COMMIT_HOME=str(home / "pre-commit-home"),
            PRE_COMMIT_COLOR="never",
            GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
            GIT_CONFIG_NOSYSTEM="1",
        )
        self.edits = 0

    def run(self, *args: str) -> float:
        """Run a command in the repository; its wall time in seconds. Fails loudly."""
        start = time.perf_counter()
        result = subprocess.run(
            args,
            cwd=self.path,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"{shlex.join(args)} failed:\n{result.stdout}")
        return elapsed

    def commit_edit(self, lesson: str, *flags: str) -> float:
        """Add a sentence to the lesson, stage it, and time the commit alone."""
        self.edits += 1
        with (self.path / lesson).open("a", encoding="utf-8") as handle:
            handle.write(f"\nA sentence of plain prose, number {self.edits}.\n")
        self.run("git", "add", "--", lesson)
        return self.run("git", "commit", "-q", *flags, "-m", f"edit {self.edits}")


def setup(root: Path) -> Repo:
    repo = Repo(root / "repo", root)
    repo.path.mkdir()
    shutil.copytree(REPO / "course", repo.path / "course")
    shutil.copy2(REPO / ".gitignore", repo.path / ".gitignore")
    (repo.path / ".pre-commit-config.yaml").write_text(local_hooks(), encoding="utf-8")
    repo.run(sys.executable, "-m", "coursekit", "schema")
    repo.run("git", "init", "-q", "-b", "main")
    repo.run("git", "config", "user.name", "Benchmark")
    repo.run("git", "config", "user.email", "benchmark@example.invalid")
    repo.run("git", "config", "commit.gpgsign", "false")
    repo.run("git", "add", "-A")
    repo.run("git", "commit", "-q", "--no-verify", "-m", "the course")
    repo.run(*pre_commit(), "install")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lesson", default=LESSON, help="a lesson path inside the course copy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="coursekit-hooks-") as tmp:
        repo = setup(Path(tmp))
        repo.commit_edit(args.lesson)  # warm: caches, pre-commit's config, the page cache
        repo.commit_edit(args.lesson, "--no-verify")
        hooked: list[float] = []
        bare: list[float] = []
        for _ in range(args.runs):
            hooked.append(repo.commit_edit(args.lesson))
            bare.append(repo.commit_edit(args.lesson, "--no-verify"))
    with_hooks = statistics.median(hooked)
    without = statistics.median(bare)
    ms = 1000.0
    print(f"commit touching {args.lesson} (median of {args.runs}, warm)")
    print(f"  git commit with the hooks        {with_hooks * ms:7.0f} ms")
    print(f"  git commit --no-verify           {without * ms:7.0f} ms")
    print(f"  the hooks add                    {(with_hooks - without) * ms:7.0f} ms")
    verdict = "within" if with_hooks < TARGET_SECONDS else "OVER"
    print(f"  target: under {TARGET_SECONDS * ms:.0f} ms end to end: {verdict}")


if __name__ == "__main__":
    main()
