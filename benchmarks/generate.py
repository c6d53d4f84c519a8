#!/usr/bin/env python3
"""Write a synthetic course of N chapters shaped like the real II.2.

    python benchmarks/generate.py N OUT_DIR      # writes OUT_DIR/course/ and OUT_DIR/schemas/

Each chapter has what II.2 has (a 25-line notation table, two apparatus links, a proposition
whose claim is the thesis, three figures with SVG assets, five written lessons and a score of
planned items) plus what an M2 chapter adds: three worked problems with numpy programs in three
variants and two exercises, one of them computed. The big lesson carries II.2's formulas and
claims (identities, a solve, inequalities, orders of growth and values quoted in the prose) with
the numbers changed per chapter, so no two chapters share a claim. Only the standard library is
used; the output is deterministic.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

CHAPTERS_PER_BOOK = 10
REPO = Path(__file__).resolve().parent.parent

COURSE = """\
# yaml-language-server: $schema=../schemas/course.schema.json
title: A Synthetic Course
books: [{books}]

strands:
  - id: basics
    purpose: what the words mean
  - id: concept
    purpose: what to picture
  - id: theory
    purpose: why it works, and when it does not
  - id: mathematics
    purpose: derive it, then compute it
  - id: practice
    purpose: build it, break it, read the papers

maturity:
  - id: M0
    name: Outline
    description: Named and planned; nothing is owed yet.
    requires:
      strands: {{basics: 0, concept: 0, theory: 0, mathematics: 0, practice: 0}}
      problems: 0
      variants: 0
      exercises: 0
  - id: M1
    name: Sketch
    description: Every strand has begun; a reader can follow the thread, thinly.
    requires:
      strands: {{basics: 3, concept: 1, theory: 1, mathematics: 3, practice: 2}}
      problems: 1
      variants: 1
      exercises: 2
  - id: M2
    name: Substantive
    description: The derivations are in place.
    requires:
      strands: {{basics: 9, concept: 2, theory: 2, mathematics: 9, practice: 6}}
      problems: 3
      variants: 3
      exercises: 6

notation:
  - symbol: '\\mathrm{{softmax}}'
    meaning: normalised exponential, applied row by row
  - symbol: 'O'
    meaning: order of growth; a cost bounded by a constant multiple of its argument
"""

BOOK0 = """\
# yaml-language-server: $schema=../../schemas/book.schema.json
id: "0"
title: The apparatus
summary: The mathematics the chapters lean on, assumed here without being taught here.
areas:
  IT: Information theory
  LA: Linear algebra
apparatus:
  - id: 0.IT.01
    title: Entropy
    status: written
    summary: How much surprise a distribution holds on average.
    notation:
      - symbol: 'H(p)'
        meaning: entropy of the distribution p
  - id: 0.LA.03
    title: Inner products, norms and cosine similarity
    status: written
    summary: The inner product as a measure of how far two vectors agree.
    notation:
      - symbol: '\\langle u, v \\rangle'
        meaning: inner product of the vectors u and v
"""

BOOK = """\
# yaml-language-server: $schema=../../schemas/book.schema.json
id: {book}
title: Synthetic book {book}
summary: Chapters written by a generator, shaped like II.2.
chapters: [{chapters}]
"""

NOTATION = [
    ("T", "sequence length, in tokens"),
    ("d", "model width; the common value when all the widths below are taken equal"),
    ("W_{hh}", "the recurrent weight matrix, which carries the state from one step to the next"),
    ("W_{xh}", "the input weight matrix, which carries a token's vector into the state"),
    ("t", "a step of the recurrence, and the position it reads, from 1 to T"),
    ("h_t", "the recurrent state after step t"),
    ("x_t", "the vector of the token at position t"),
    ("d_h", "width of the recurrent state"),
    ("d_x", "width of a token's vector"),
    ("d_k", "width of a query and of a key"),
    ("d_v", "width of a value"),
]

PLANNED = [
    ("sequential-and-parallel", "basics", "Sequential steps, parallel work and depth"),
    ("path-length", "basics", "The path between two positions"),
    ("order-of-growth", "basics", "Reading an order of growth"),
    ("source-and-target", "basics", "Source, target, encoder and decoder"),
    ("training-and-generation", "basics", "Processing a finished sentence versus generating"),
    ("bag-of-vectors", "basics", "Sets, sequences and a bag of vectors"),
    ("self-attention", "mathematics", "Self-attention: the sequence asks itself"),
    ("scaled-scores", "mathematics", "Why the scores are divided by a square root"),
    ("masks", "mathematics", "Masks, or how to train a decoder in one pass"),
    ("positional-encoding", "theory", "Positional encoding: putting the order back"),
    ("multi-head-attention", "mathematics", "Several narrow grids instead of one wide one"),
    ("softmax-gradient", "mathematics", "The gradient through a row-wise softmax"),
    ("feed-forward", "mathematics", "The position-wise feed-forward block"),
    ("residuals", "mathematics", "Residual paths and layer normalisation"),
    ("cost-of-a-layer", "mathematics", "Counting the work of a whole layer"),
    ("memory-of-the-grid", "mathematics", "What the grid costs in memory"),
    ("when-the-trade-pays", "theory", "When the grid pays, and when the chain is cheaper"),
    ("attention-in-numpy", "practice", "Attention in a few lines of numpy"),
    ("timing", "practice", "Timing the chain against the grid"),
    ("shuffle-the-rows", "practice", "Break it: shuffle the rows"),
    ("find-the-crossing", "practice", "Find the crossing by experiment"),
    ("out-of-memory", "practice", "Break it: make the grid run out of memory"),
    ("reading-table-1", "practice", "Reading Table 1 of Attention Is All You Need"),
]

PROSE = (
    "A count of multiplications is the same on every computer, which makes it a fair way to "
    "compare two designs on paper. Seconds depend on the machine, the library and the day; "
    "additions come almost one for one with the multiplications and would only double every "
    "count. What matters here is the shape of the work, and which parts of it must wait for "
    "others before they can begin."
)

SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 520 250" width="520" height="250" role="img">
  <title>{title}</title>
  <rect x="10" y="10" width="500" height="230" fill="none" stroke="#222"/>
  <text x="30" y="130">{title}</text>
</svg>
"""


def roman(number: int) -> str:
    values = [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for value, letters in values:
        while number >= value:
            out += letters
            number -= value
    return out


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def chapter_yaml(cid: str, previous: str | None) -> str:
    thesis = f"In chapter {cid} attention repairs one bottleneck, not every weakness."
    lines = [
        "# yaml-language-server: $schema=../../../schemas/chapter.schema.json",
        f"id: {cid}",
        f"title: From recurrence to attention, take {cid}",
        "authors: [Ada Example]",
        f"thesis: {thesis}",
        "dek: A summary of fixed width is a bottleneck; let every position consult the source.",
        "problem: >-",
        "  A gated recurrence still lost track of a long dependency. The fault lies in the",
        "  architecture: a state of fixed width cannot carry a source of unbounded length $T$.",
        "maturity: M2",
        "status: draft",
        "",
        "apparatus:",
        "  - id: 0.IT.01",
        "    title: Entropy",
        "  - id: 0.LA.03",
        "    title: Inner products, norms and cosine similarity",
        "",
        "notation:",
    ]
    for symbol, meaning in NOTATION:
        lines += [f"  - symbol: {quote(symbol)}", f"    meaning: {meaning}"]
    lines += [
        "",
        "propositions:",
        "  - number: 1",
        f"    claim: {thesis}",
        "    gloss: >-",
        "      It joins any two positions in a single step and computes every pair at once,",
        "      and it pays with work that grows with the square of the sequence length.",
        "",
        "figures:",
    ]
    figures = [
        ("The recurrence as a chain of waits", "chain-of-waits"),
        ("Four architectures by path length", "path-length"),
        ("The grid of scores", "grid-of-scores"),
    ]
    for number, (title, asset) in enumerate(figures, 1):
        lines += [
            f"  - number: {number}",
            f"    title: {title}",
            "    caption: >-",
            "      Every state $h_t$ needs the one before it, so the $T$ steps run in order; the",
            "      input terms $W_{xh} x_t$ can all be computed at once.",
            "    alt: >-",
            "      A row of boxes for the states, joined left to right by arrows labelled $W_{hh}$.",
            f"    asset: figures/{asset}.svg",
        ]
    lines += ["", "items:"]
    lessons = [
        "tokens-and-sequence-length",
        "model-width",
        "counting-multiplications",
        "goodbye-to-recurrence",
        "the-grid-of-scores",
    ]
    for lesson in lessons:
        lines.append(f"  - lesson: {lesson}")
    for slug, strand, title in PLANNED:
        lines += [f"  - planned: {slug}", f"    strand: {strand}", f"    title: {quote(title)}"]
    lines += [
        "",
        "problems: [cost-at-fifty, grid-at-fifty, crossing]",
        "exercises: [cost-by-hand, why-the-chain-waits]",
        "",
    ]
    del previous
    return "\n".join(lines)


def lesson(title: str, strand: str, body: str, front: str = "") -> str:
    head = f"---\ntitle: {title}\nstrand: {strand}\nreading_time: 6\n{front}---\n\n"
    return head + body


def short_lesson(cid: str, title: str, strand: str, symbol: str) -> str:
    body = (
        f"This lesson of chapter {cid} names the quantity ${symbol}$ and says how to read it.\n\n"
        + "\n\n".join([PROSE] * 4)
        + "\n\nThe next step is in "
        f"[the lesson on leaving recurrence behind](lesson:{cid}/goodbye-to-recurrence).\n"
    )
    return lesson(title, strand, body)


def counting_lesson(cid: str, d: int) -> str:
    step = d * d + d * d
    front = (
        "assume:\n  positive: [d_h, d_x]\n  integer: [d_h, d_x]\n"
        "formulas:\n  step: d_h**2 + d_h*d_x\n"
        "claims:\n  - id: step-d\n    kind: value\n    expr: step\n"
        f"    where: {{d_h: {d}, d_x: {d}}}\n    value: {step}\n"
    )
    body = (
        "\n\n".join([PROSE] * 3) + "\n\nThe matrix $W_{hh}$ has $d_h$ rows and columns and "
        "$W_{xh}$ has $d_h$ rows and $d_x$ columns, so one step costs\n\n"
        "$$d_h^2 + d_h d_x$$ {#eq:step}\n\n"
        f"multiplications. With both widths at ${d}$, a single step takes "
        f"[{step:,}]{{claim=step-d}} of them.\n"
    )
    return lesson("What counts as a multiplication", "basics", body, front)


def big_lesson(cid: str, d: int, previous: str | None) -> str:
    t1, t2 = 50, 2 * d + 8

    def rec(t: int) -> int:
        return t * (d * d + d * d)

    def grid(t: int) -> int:
        return t * t * d + t * t * d

    ew = "{d_h: d, d_x: d, d_k: d, d_v: d}"
    front = f"""\
assume:
  positive: [T, d, d_h, d_x, d_k, d_v]
  integer: [T, d, d_h, d_x, d_k, d_v]
formulas:
  recurrence: T*(d_h**2 + d_h*d_x)
  grid: T**2*d_k + T**2*d_v
  recurrence_equal: 2*T*d**2
  grid_equal: 2*T**2*d
claims:
  - id: recurrence-equal-widths
    kind: identity
    lhs: recurrence
    rhs: recurrence_equal
    where: {{d_h: d, d_x: d}}
  - id: grid-equal-widths
    kind: identity
    lhs: grid
    rhs: grid_equal
    where: {{d_k: d, d_v: d}}
  - id: ratio
    kind: identity
    lhs: grid / recurrence
    rhs: T/d
    where: {ew}
  - id: crossing
    kind: solve
    lhs: grid
    rhs: recurrence
    for: T
    where: {{d_h: {d}, d_x: {d}, d_k: {d}, d_v: {d}}}
    solutions: [{d}]
  - id: grid-cheaper-below
    kind: inequality
    lhs: grid
    op: "<"
    rhs: recurrence
    where: {ew}
    when: T < d
  - id: order-recurrence
    kind: order
    expr: recurrence
    where: {{d_h: d, d_x: d}}
    order: T*d**2
    note: as T and d grow
  - id: order-grid
    kind: order
    expr: grid
    where: {{d_k: d, d_v: d}}
    order: T**2*d
    note: as T and d grow
  - id: rec-short
    kind: value
    expr: recurrence
    where: {{T: {t1}, d_h: {d}, d_x: {d}}}
    value: {rec(t1)}
  - id: grid-short
    kind: value
    expr: grid
    where: {{T: {t1}, d_k: {d}, d_v: {d}}}
    value: {grid(t1)}
  - id: grid-long
    kind: value
    expr: grid
    where: {{T: {t2}, d_k: {d}, d_v: {d}}}
    value: {grid(t2)}
  - id: rec-long
    kind: value
    expr: recurrence
    where: {{T: {t2}, d_h: {d}, d_x: {d}}}
    value: {rec(t2)}
quiz:
  - kind: single
    prompt: >-
      Processors are unlimited. Which part of a recurrent network's work still runs step after
      step?
    options:
      - text: The input terms $W_{{xh}} x_t$, one per position.
      - text: The chain of states $h_t$, because each one needs the one before it.
        correct: true
      - text: Nothing; with enough processors every part of the work overlaps.
  - kind: numeric
    prompt: Take every width equal to $d = {d}$. For which $T$ do the two costs meet?
    answer: {d}
    margin: 0
    claim: crossing
reading:
  - kind: paper
    title: Attention Is All You Need
    authors: [Ashish Vaswani, Noam Shazeer, Niki Parmar]
    year: 2017
    identifier: arXiv:1706.03762
    note: §4 and Table 1
"""
    back = f"[Chapter {previous}](chapter:{previous}) " if previous else "The previous chapter "
    sections = [
        f"{back}left a recurrence that still lost track of a long dependency. "
        "[Fig. 1](fig:1) draws it as a chain, and [Prop. 1](prop:1) says what replaces it; "
        "the comparison of vectors behind it is in "
        "[the apparatus on inner products](apparatus:0.LA.03).",
        PROSE,
        "## The chain of waits\n\n"
        + "\n\n".join([PROSE] * 6)
        + "\n\nAt each step $t$ the state $h_t$ needs the state before it, so the $T$ steps "
        "run in order, "
        "while every input term $W_{xh} x_t$ could be computed at once ([Fig. 2](fig:2)).",
        "## Two counts\n\nOne step of the recurrence applies $W_{hh}$ and $W_{xh}$ "
        "(see [the lesson on counting](lesson:" + cid + "/counting-multiplications)), "
        "so over a sequence it costs\n\n$$T\\,(d_h^2 + d_h d_x)$$ {#eq:recurrence}\n\n"
        "and the grid of [Fig. 3](fig:3) costs\n\n$$T^2 d_k + T^2 d_v$$ {#eq:grid}\n\n"
        "With every width equal to $d$ these are\n\n$$2 T d^2$$ {#eq:recurrence_equal}\n\n"
        "and\n\n$$2 T^2 d$$ {#eq:grid_equal}\n\n"
        "so the grid costs $T/d$ times the recurrence, an order of $O(T^2 d)$ against "
        "$O(T d^2)$.",
        "\n\n".join([PROSE] * 8),
        f"## The numbers\n\nTake $d = {d}$ and a sentence of $T = {t1}$ tokens. The "
        f"recurrence costs [{rec(t1):,}]{{claim=rec-short}} multiplications and the grid "
        f"[{grid(t1):,}]{{claim=grid-short}}. Stretch the text to $T = {t2}$: the grid needs "
        f"[{grid(t2):,}]{{claim=grid-long}} and the recurrence "
        f"[{rec(t2):,}]{{claim=rec-long}}.",
        "\n\n".join([PROSE] * 6),
        "The way out is in [the lesson on the grid of scores](lesson:"
        + cid
        + "/the-grid-of-scores), and the order is restored in "
        "[a lesson of its own](lesson:" + cid + "/positional-encoding).",
    ]
    return lesson("Goodbye to recurrence", "concept", "\n\n".join(sections) + "\n", front)


def problem(title: str, variant: str, statement: str, value: int, program: str) -> tuple[str, str]:
    manifest = (
        "# yaml-language-server: $schema=../../../../../schemas/problem.schema.json\n"
        f"title: {title}\nvariant: {variant}\nstatement: >-\n  {statement}\n"
        f"program: solution.py\nsolution:\n  value: {value}\n  rtol: 0\n  atol: 0\n"
        "supports: [1]\n"
    )
    return manifest, program


def write_chapter(base: Path, cid: str, number: int, previous: str | None) -> None:
    folder = base / f"{number}-synthetic-chapter-{number}"
    d = 256 + 8 * (number % 32) + (hash_id(cid) % 7) * 64
    files: dict[str, str] = {
        "chapter.yaml": chapter_yaml(cid, previous),
        "lessons/tokens-and-sequence-length.md": short_lesson(
            cid, "Tokens and sequence length", "basics", "T"
        ),
        "lessons/model-width.md": short_lesson(cid, "Model width", "basics", "d"),
        "lessons/counting-multiplications.md": counting_lesson(cid, d),
        "lessons/goodbye-to-recurrence.md": big_lesson(cid, d, previous),
        "lessons/the-grid-of-scores.md": short_lesson(cid, "The grid of scores", "concept", "d_k"),
    }
    for asset, title in [
        ("chain-of-waits", "The recurrence as a chain of waits"),
        ("path-length", "Four architectures by path length"),
        ("grid-of-scores", "The grid of scores"),
    ]:
        files[f"figures/{asset}.svg"] = SVG.format(title=title)
    t = 50 + number % 40
    problems = {
        "cost-at-fifty": problem(
            "Counting the recurrence",
            "cost-count",
            f"With $T = {t}$ and $d = {d}$, how many multiplications does the recurrence make?",
            t * 2 * d * d,
            "import numpy as np\n\n\ndef solve():\n"
            f"    T, d = {t}, {d}\n    W_hh = np.zeros((d, d))\n    W_xh = np.zeros((d, d))\n"
            "    return int(T * (W_hh.size + W_xh.size))\n",
        ),
        "grid-at-fifty": problem(
            "Counting the grid",
            "grid-count",
            f"With $T = {t}$ and $d = {d}$, how many multiplications does the grid make?",
            2 * t * t * d,
            "import numpy as np\n\n\ndef solve():\n"
            f"    T, d = {t}, {d}\n    scores = np.zeros((T, T))\n"
            "    return int(2 * scores.size * d)\n",
        ),
        "crossing": problem(
            "Where the costs meet",
            "crossing",
            f"With every width equal to $d = {d}$, find the $T$ at which both costs agree.",
            d,
            "import numpy as np\n\n\ndef solve():\n"
            f"    d = {d}\n    T = np.arange(1, 4 * d)\n"
            "    gap = np.abs(2 * T**2 * d - 2 * T * d**2)\n"
            "    return int(T[np.argmin(gap)])\n",
        ),
    }
    for pid, (manifest, program) in problems.items():
        files[f"problems/{pid}/problem.yaml"] = manifest
        files[f"problems/{pid}/solution.py"] = program
    schema = "# yaml-language-server: $schema=../../../../../schemas/exercise.schema.json\n"
    files["exercises/cost-by-hand/exercise.yaml"] = (
        schema + "title: A step by hand\nstatement: >-\n"
        f"  How many multiplications does one step make when $d_h = d_x = {d}$?\n"
        f"program: solution.py\nsolution:\n  value: {2 * d * d}\n"
    )
    files["exercises/cost-by-hand/solution.py"] = (
        f"def solve():\n    d = {d}\n    return d * d + d * d\n"
    )
    files["exercises/why-the-chain-waits/exercise.yaml"] = (
        schema + "title: Why the chain waits\nstatement: >-\n"
        "  Explain why the states $h_t$ cannot be computed in parallel.\n"
        "solution:\n  text: Each state needs the one before it.\n"
    )
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def hash_id(text: str) -> int:
    return sum((index + 1) * ord(char) for index, char in enumerate(text))


def generate(chapters: int, out: Path) -> Path:
    """Write `out/course` (and `out/schemas`, a copy of the repository's) and return it."""
    course = out / "course"
    if course.exists():
        shutil.rmtree(course)
    course.mkdir(parents=True)
    if (REPO / "schemas").is_dir():
        shutil.copytree(REPO / "schemas", out / "schemas", dirs_exist_ok=True)
    books = [roman(b + 1) for b in range((chapters + CHAPTERS_PER_BOOK - 1) // CHAPTERS_PER_BOOK)]
    (course / "course.yaml").write_text(
        COURSE.format(books=", ".join(['"0"', *books])), encoding="utf-8"
    )
    (course / "0").mkdir()
    (course / "0" / "book.yaml").write_text(BOOK0, encoding="utf-8")
    previous: str | None = None
    for index, book in enumerate(books):
        first = index * CHAPTERS_PER_BOOK
        numbers = range(1, min(CHAPTERS_PER_BOOK, chapters - first) + 1)
        ids = [f"{book}.{n}" for n in numbers]
        (course / book).mkdir()
        (course / book / "book.yaml").write_text(
            BOOK.format(book=book, chapters=", ".join(ids)), encoding="utf-8"
        )
        for n, cid in zip(numbers, ids, strict=True):
            write_chapter(course / book, cid, n, previous)
            previous = cid
    return course


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: generate.py N OUT_DIR", file=sys.stderr)
        return 2
    course = generate(int(argv[0]), Path(argv[1]))
    files = sum(1 for path in course.rglob("*") if path.is_file())
    print(f"wrote {argv[0]} chapters, {files} files, under {course}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
