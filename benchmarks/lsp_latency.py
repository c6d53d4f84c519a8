#!/usr/bin/env python3
"""How long an author waits for diagnostics after an edit, through the real `coursekit lsp`.

Starts the server on stdio with pygls's client (debounce 0, so the figure is the check itself
plus the protocol), opens a lesson, lets the first check fill the caches, then sends edits one
at a time and times each from `didChange` to the `publishDiagnostics` that answers it. Two
kinds of edit, interleaved:

- **prose**: a sentence added to the lesson (structural rules, cached formula verdicts);
- **broken link**: an apparatus link to an entry that does not exist (CK504 must appear).

On the bundled course and on the synthetic course of `--chapters` chapters (benchmarks/
generate.py). Prints the median and the worst per course and kind; the target is 150 ms.

    python benchmarks/lsp_latency.py [--edits 15] [--chapters 100]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from generate import generate  # type: ignore[import-not-found]  # noqa: E402

TARGET_MS = 150.0


async def measure(root: Path, lesson: Path, edits: int) -> dict[str, list[float]]:
    client = LanguageClient("lsp-latency", "1")
    arrived: asyncio.Queue[tuple[float, types.PublishDiagnosticsParams]] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        arrived.put_nowait((time.perf_counter(), params))

    await client.start_io(sys.executable, "-m", "coursekit", "lsp", cwd=str(root))
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    client.initialized(types.InitializedParams())
    uri = lesson.as_uri()
    original = lesson.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=original)
        )
    )

    async def answer(want: bool | None) -> float:
        """The time of the next publication for the lesson (with CK504 if `want`)."""
        while True:
            at, params = await asyncio.wait_for(arrived.get(), 600)
            if params.uri != uri:
                continue
            broken = any(d.code == "CK504" for d in params.diagnostics)
            if want is None or broken == want:
                return at

    await answer(None)  # the first check: caches filled, formulas verified
    times: dict[str, list[float]] = {"prose": [], "broken link": []}
    for index in range(edits):
        for kind in times:
            if kind == "prose":
                text = original + f"\nOne more sentence, number {index}.\n"
            else:
                text = original + f"\nSee [the entry](apparatus:0.ZZ.{index:02d}).\n"
            version = 2 + 2 * index + (kind != "prose")
            sent = time.perf_counter()
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                    [types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
            got = await answer(kind != "prose")
            times[kind].append((got - sent) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def report(name: str, times: dict[str, list[float]]) -> None:
    for kind, values in times.items():
        median = statistics.median(values)
        verdict = "ok" if median <= TARGET_MS else "over"
        print(
            f"{name:<28} {kind:<12} median {median:7.1f} ms   worst {max(values):7.1f} ms"
            f"   ({len(values)} edits; target {TARGET_MS:.0f} ms: {verdict})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--chapters", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bundled = Path(tmp) / "bundled"
        shutil.copytree(REPO / "course", bundled / "course")
        lesson = (
            bundled / "course/II/2-from-recurrence-to-attention/lessons/counting-multiplications.md"
        )
        report("bundled course", asyncio.run(measure(bundled, lesson, args.edits)))
        synthetic = generate(args.chapters, Path(tmp) / "synthetic")
        lessons = sorted(synthetic.glob("*/*/lessons/*.md"))
        report(
            f"synthetic, {args.chapters} chapters",
            asyncio.run(measure(synthetic.parent, lessons[0], args.edits)),
        )


if __name__ == "__main__":
    main()
