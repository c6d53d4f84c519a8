"""How the LaTeX reader does on its corpus: read, refused naming the construct, misread.

    python benchmarks/latex_corpus.py                      # this checkout's reader
    python benchmarks/latex_corpus.py --src ../base/src    # another checkout's reader, same corpus

It also prints the median time to read one snippet (over `--repeat` runs of the corpus), so two
readers are timed side by side in one run.

A snippet recorded as `read` counts as read when the tree printed by
`coursekit.verify.latex.show` is exactly the recorded one, and as misread when the reader
accepts it with any other tree; one recorded as `refuse` is misread when accepted at all. A
refusal counts as naming the construct when the message holds the recorded construct (for a
`read` snippet: any backslash command or quoted token of the snippet).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "verify" / "latex_corpus" / "corpus.yaml"
SHOW = HERE.parent / "src" / "coursekit" / "verify" / "latex" / "show.py"


def _show_module() -> Any:
    # The printer reads attribute names only, so it prints an older reader's trees too.
    spec = importlib.util.spec_from_file_location("_latex_show", SHOW)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names_construct(message: str, tex: str) -> bool:
    tokens = re.findall(r"\\[A-Za-z]+|'[^']+'", message)
    return any(token.strip("'") in tex for token in tokens)


def classify(entry: dict[str, Any], parse: Any, show_sides: Any, error: type) -> str:
    tex = entry["tex"]
    try:
        shown = show_sides(parse(tex))
    except error as exc:
        message = str(getattr(exc, "message", exc))
        named = entry["refuse"] in message if "refuse" in entry else _names_construct(message, tex)
        return "refused, construct named" if named else "refused, construct not named"
    except Exception as exc:  # a crash is the worst outcome: count it apart
        return f"crashed ({type(exc).__name__})"
    if "read" in entry and shown == entry["read"]:
        return "read"
    return "misread"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    parser.add_argument("--show-misread", action="store_true")
    parser.add_argument("--repeat", type=int, default=5, help="timing runs (median)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    latex = importlib.import_module("coursekit.verify.latex")
    error = importlib.import_module("coursekit.verify.expr").FormulaError
    show_sides = _show_module().show_sides
    corpus = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    counts: dict[str, int] = {}
    for entry in corpus:
        outcome = classify(entry, latex.parse_latex_sides, show_sides, error)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "misread" and args.show_misread:
            print("misread:", entry["tex"])
    total = len(corpus)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for entry in corpus:
            with contextlib.suppress(Exception):
                latex.parse_latex_sides(entry["tex"])
        times.append(time.perf_counter() - start)
    per = 1e6 * statistics.median(times) / total
    print(f"reader: {args.src}  corpus: {total} snippets  median {per:.0f} µs a snippet")
    for outcome in sorted(counts):
        print(f"  {outcome:32} {counts[outcome]:4}  {100 * counts[outcome] / total:5.1f}%")
    good = counts.get("read", 0) + counts.get("refused, construct named", 0)
    print(f"  {'read or refused, named':32} {good:4}  {100 * good / total:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
