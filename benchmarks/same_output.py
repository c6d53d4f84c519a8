#!/usr/bin/env python3
"""Behaviour unchanged: this checkout's coursekit and another's print the same bytes.

    .venv/bin/python benchmarks/same_output.py --base /work/wt/base [--course DIR]

Both tools run, one after the other, in one temporary copy of the bundled course (this
checkout's `course/` and `pyproject.toml`, or `--course DIR`'s), so every path and URI they print
is the same folder. For each command below, stdout, stderr and the exit code of the two runs
must be byte-identical; the first lines of any difference are printed. `--no-cache` everywhere:
nothing is read from or written to a cache, and the checkouts are not touched.

The bundled course is clean, so most messages are never printed on it. So `check` is also
compared, as text and JSON, on broken copies: one per planted defect below (each edits every
lesson it matches: transposes dropped, shapes swapped, values nudged, undeclared or unreadable
maths), and with `--mutants N` on N copies each given one to three mutations of the fuzzer
(tests/fuzz/mutate.py, reproducible from `--seed`).
Exits 0 when every command agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: What an author and CI run on a course, in every output format.
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("check", "--no-cache"),
    ("check", "--no-cache", "--format", "json"),
    ("check", "--no-cache", "--format", "github"),
    ("check", "--no-cache", "--format", "sarif"),
    ("check", "--no-cache", "--statistics"),
    ("check", "--no-cache", "--statistics", "--format", "json"),
    ("check", "--no-cache", "--structural", "--format", "json"),
    ("check", "--no-cache", "--no-exec", "--format", "json"),
    ("owed", "--no-cache"),
    ("owed", "--no-cache", "--format", "json"),
    ("owed", "--no-cache", "--format", "markdown"),
    ("owed", "--no-cache", "--format", "html"),
    ("rules",),
)
#: What is compared on a broken copy (the programs are run too: `check` runs them by default).
MUTANT_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("check", "--no-cache"),
    ("check", "--no-cache", "--format", "json"),
)

Run = tuple[bytes, bytes, int]


#: (what it breaks, pattern, replacement template as `re.sub` reads it) applied to every
#: lesson's whole text.
PLANTED: tuple[tuple[str, str, str], ...] = (
    ("every transpose in a formula dropped (shapes)", r"\b([A-Za-z]\w*)\.T\b", r"\1"),
    ("every transpose in the LaTeX dropped (displays)", r"\^\\top\b", ""),
    ("every declared shape's axes swapped", r"shape: \[(\w+), (\w+)\]", r"shape: [\2, \1]"),
    (
        "every whole claimed value with a 1 written before it",
        r"(\n\s+value: )(\d+)\n",
        r"\g<1>1\2\n",
    ),
    ("undeclared symbols in the prose", r"\Z", r"\nAnd $\\zeta_{qq} + W_hh x_t^{d_z}$ too.\n"),
    ("unreadable maths in the prose", r"\Z", r"\nThen $\\frac{a}{\\left( b$ ends.\n"),
)


def run(tool: str, args: tuple[str, ...], cwd: Path) -> Run:
    # Without these, the tool would pick its format or colours from the environment.
    env = {k: v for k, v in os.environ.items() if k not in {"GITHUB_ACTIONS", "FORCE_COLOR"}}
    done = subprocess.run([tool, *args], cwd=cwd, capture_output=True, env=env, check=False)
    return done.stdout, done.stderr, done.returncode


def difference(new: Run, base: Run, lines: int) -> list[str]:
    """What differs between two runs, as the first `lines` lines of unified diffs."""
    out: list[str] = []
    if new[2] != base[2]:
        out.append(f"    exit code: this {new[2]}, base {base[2]}")
    for name, a, b in (("stdout", new[0], base[0]), ("stderr", new[1], base[1])):
        if a == b:
            continue
        diff = difflib.unified_diff(
            b.decode("utf-8", "replace").splitlines(),
            a.decode("utf-8", "replace").splitlines(),
            f"base {name}",
            f"this {name}",
            lineterm="",
        )
        out += [f"    {line}" for line in diff][:lines]
    return out


def compare(
    new_tool: str, base_tool: str, commands: tuple[tuple[str, ...], ...], cwd: Path, lines: int
) -> int:
    """Run each command with both tools in `cwd`; print what agrees; the number that differ."""
    differing = 0
    for command in commands:
        new, old = run(new_tool, command, cwd), run(base_tool, command, cwd)
        shown = " ".join(command)
        if new == old:
            codes = sorted(set(re.findall(rb'"code": "(CK[0-9]{3})"', new[0])))
            found = f", {b' '.join(codes).decode()}" if codes else ""
            print(f"same     coursekit {shown}  ({len(new[0])} bytes, exit {new[2]}{found})")
            continue
        differing += 1
        print(f"DIFFERS  coursekit {shown}")
        print("\n".join(difference(new, old, lines)))
    return differing


def mutated(source: Path, work: Path, seed: int, case: int) -> list[str]:
    """A copy of `source`'s course in `work`, broken as fuzz case `case`; what was done."""
    sys.path.insert(0, str(REPO / "tests" / "fuzz"))
    from mutate import Workspace, apply, choose_kinds  # type: ignore[import-not-found]

    shutil.copytree(source / "course", work / "course")
    shutil.copy(source / "pyproject.toml", work / "pyproject.toml")
    rng = random.Random(f"{seed}:{case}")
    ws = Workspace(work)
    return [apply(rng, ws, kind) for kind in choose_kinds(rng, rng.choice([1, 1, 2, 3]))]


def planted(source: Path, work: Path, pattern: str, replacement: str) -> int:
    """A copy of `source`'s course in `work` with the defect planted; how many edits."""
    shutil.copytree(source / "course", work / "course")
    shutil.copy(source / "pyproject.toml", work / "pyproject.toml")
    edits = 0
    for lesson in sorted((work / "course").rglob("*.md")):
        text = lesson.read_text(encoding="utf-8")
        new, count = re.subn(pattern, replacement, text)
        lesson.write_text(new, encoding="utf-8")
        edits += count
    return edits


def main(argv: list[str]) -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress as it goes
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", type=Path, required=True, help="a checkout (of main) with its own .venv"
    )
    parser.add_argument(
        "--new",
        default=str(Path(sys.executable).parent / "coursekit"),
        help="the coursekit measured (default: this interpreter's)",
    )
    parser.add_argument(
        "--course",
        type=Path,
        default=REPO,
        help="the folder whose course/ and pyproject.toml are copied (default: this checkout)",
    )
    parser.add_argument("--lines", type=int, default=40, help="diff lines shown per command")
    parser.add_argument("--mutants", type=int, default=0, help="broken copies also compared")
    parser.add_argument("--seed", type=int, default=21, help="the mutants' seed")
    args = parser.parse_args(argv)
    base = str(args.base.resolve() / ".venv" / "bin" / "coursekit")
    if not Path(base).is_file():
        parser.error(f"{base} does not exist: give --base a checkout with its own .venv")
    with tempfile.TemporaryDirectory(prefix="coursekit-same-") as tmp:
        work = Path(tmp) / "bundled"
        shutil.copytree(args.course / "course", work / "course")
        shutil.copy(args.course / "pyproject.toml", work / "pyproject.toml")
        print(f"the bundled course ({args.course / 'course'})")
        differing = compare(args.new, base, COMMANDS, work, args.lines)
        total = len(COMMANDS)
        for number, (what, pattern, replacement) in enumerate(PLANTED):
            folder = Path(tmp) / f"planted-{number}"
            edits = planted(args.course, folder, pattern, replacement)
            print(f"planted: {what} ({edits} edits)")
            if not edits:
                print("DIFFERS  nothing matched: the defect was not planted")
                differing += 1
            differing += compare(args.new, base, MUTANT_COMMANDS, folder, args.lines)
            total += len(MUTANT_COMMANDS)
        for case in range(args.mutants):
            folder = Path(tmp) / f"mutant-{case}"
            print(
                f"mutant {case} (seed {args.seed}): "
                + "; ".join(what[:100] for what in mutated(args.course, folder, args.seed, case))
            )
            differing += compare(args.new, base, MUTANT_COMMANDS, folder, args.lines)
            total += len(MUTANT_COMMANDS)
    print(f"{total - differing} of {total} runs print the same bytes and exit codes")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
