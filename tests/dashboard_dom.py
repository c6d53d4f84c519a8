"""Read the owed dashboard back as data: one dict per chapter row, keyed by column header.

Used on the page as written (tests/report) and on the DOM a real browser built from it
(tests/browser), so both compare what a reader sees with `owed --format json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

#: The seed chapter page's own counters (II.2 in tests/fixtures/seed-course/), as the dashboard
#: must show them: strands written/required, problems, variants, exercises and what it owes.
SEED_COUNTERS = {
    "basics": "3/9",
    "concept": "2/2",
    "theory": "0/2",
    "mathematics": "0/9",
    "practice": "0/6",
    "Problems": "0/3",
    "Variants": "0/3",
    "Exercises": "0/6",
    "Owes": "9",
}


@dataclass
class Cell:
    text: str = ""  # all the cell's text
    number: str = ""  # the text of its count (a `<b>` in the cell)
    links: list[str] = field(default_factory=list)
    bars: list[str] = field(default_factory=list)  # the style of each bar (a count with --w)


@dataclass
class Table:
    caption: str = ""
    head: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)

    def records(self) -> list[dict[str, Cell]]:
        return [dict(zip(self.head, row, strict=True)) for row in self.rows]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self.stack: list[str] = []
        self.cell: Cell | None = None
        self.in_head = self.in_caption = False
        self.number_depth = -1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "table":
            self.tables.append(Table())
        elif tag == "thead":
            self.in_head = True
        elif tag == "caption":
            self.in_caption = True
        elif tag == "tr" and not self.in_head and self.tables:
            self.tables[-1].rows.append([])
        elif tag in ("th", "td") and self.tables:
            self.cell = Cell()
        elif self.cell is not None and tag == "a" and attr.get("href"):
            self.cell.links.append(attr["href"] or "")
        if self.cell is not None and "--w:" in (attr.get("style") or ""):
            self.cell.bars.append(attr.get("style") or "")
        if tag == "b" and self.cell is not None:
            self.number_depth = len(self.stack)
        if tag not in ("meta", "br", "img", "link", "input"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        if tag == "b" and len(self.stack) == self.number_depth:
            self.number_depth = -1
        if tag == "thead":
            self.in_head = False
        elif tag == "caption":
            self.in_caption = False
        elif tag in ("th", "td") and self.cell is not None:
            self.cell.text = " ".join(self.cell.text.split())
            table = self.tables[-1]
            if self.in_head:
                table.head.append(self.cell.text)
            else:
                table.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.in_caption and self.tables:
            self.tables[-1].caption += data
        if self.cell is not None:
            self.cell.text += data
            if self.number_depth >= 0:
                self.cell.number += data.strip()


def read_tables(page: str) -> list[Table]:
    reader = _Reader()
    reader.feed(page)
    reader.close()
    return reader.tables


def chapter_rows(page: str) -> dict[str, dict[str, Cell]]:
    """Chapter id -> its row, from every table but the course total."""
    rows: dict[str, dict[str, Cell]] = {}
    for table in read_tables(page):
        if table.caption.startswith("The course summed"):
            continue
        for record in table.records():
            chapter_id = record["Chapter"].text.split(" ")[0]
            assert chapter_id not in rows, f"two rows for {chapter_id}"
            rows[chapter_id] = record
    return rows


def numbers_of(chapter: dict[str, object]) -> dict[str, str]:
    """What a row must show for one chapter of `owed --format json`, by column header."""
    if not chapter["loads"]:
        return {"Owes": "?"}  # nothing else is known, so nothing else is shown
    shown: dict[str, str] = {}
    strands = chapter["strands"]
    assert isinstance(strands, dict)
    for name, count in strands.items():
        shown[name] = f"{count['written']}/{count['required']}"
    for key in ("problems", "variants", "exercises"):
        count = chapter[key]
        assert isinstance(count, dict)
        shown[key.capitalize()] = f"{count['written']}/{count['required']}"
    owes = chapter["owes"]
    shown["Owes"] = "?" if owes is None else str(owes)
    return shown
