"""`coursekit owed --format html`: the dashboard holds what `owed --format json` says.

These read the page as written; tests/browser renders it in Chromium.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from coursekit.cli import main
from dashboard_dom import SEED_COUNTERS, chapter_rows, numbers_of, read_tables
from helpers import edit

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "tests" / "fixtures" / "seed-course" / "course"
II2 = "II/2-from-recurrence-to-attention"


def owed(course: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["owed", "--no-cache", "--course", str(course), "--no-exec", *args]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def page_and_json(course: Path, *args: str) -> tuple[str, dict[str, object]]:
    code, page = owed(course, "--format", "html", *args)
    code_json, text = owed(course, "--format", "json", *args)
    assert code == code_json
    return page, json.loads(text)


def test_the_seed_page_shows_exactly_the_seeds_counters() -> None:
    page, _ = page_and_json(SEED, "--chapter", "II.2")
    row = chapter_rows(page)["II.2"]
    shown = {column: cell.number for column, cell in row.items() if cell.number}
    assert shown == SEED_COUNTERS
    assert row["Maturity"].text == "M2 Substantive" and row["Status"].text == "draft"
    assert row["basics"].bars == ["--w:33%"]
    assert row["concept"].bars == ["--w:100%"]
    assert row["theory"].bars == ["--w:0%"]


@pytest.fixture
def real(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "course", tmp_path / "course")
    return tmp_path / "course"


def test_one_row_per_chapter_with_the_numbers_of_the_json(real: Path) -> None:
    page, data = page_and_json(real)
    rows = chapter_rows(page)
    chapters = data["chapters"]
    assert isinstance(chapters, list)
    assert list(rows) == [chapter["id"] for chapter in chapters]
    for chapter in chapters:
        row = rows[chapter["id"]]
        for column, number in numbers_of(chapter).items():
            assert row[column].number == number, (chapter["id"], column)
        assert row["Chapter"].text.endswith(chapter["title"])
        assert len(row["Book 0 waits for"].links) == len(chapter["planned_apparatus"])
    (total,) = [t for t in read_tables(page) if t.caption.startswith("The course summed")]
    (record,) = total.records()
    assert record["Owes"].number == str(data["total"]["owes"])  # type: ignore[index]


def test_every_count_links_to_the_files_behind_it_from_where_the_page_is(real: Path) -> None:
    out = real.parent / "site" / "deep" / "dashboard.html"
    out.parent.mkdir(parents=True)
    code, stdout = owed(real, "--format", "html", "--output-file", str(out))
    assert code == 0 and stdout == ""
    page = out.read_text(encoding="utf-8")
    data = json.loads(owed(real, "--format", "json")[1])
    row = chapter_rows(page)["II.2"]
    (ii2,) = [c for c in data["chapters"] if c["id"] == "II.2"]
    assert len(row["Problems"].links) == ii2["problems"]["written"] > 0
    assert len(row["Exercises"].links) == ii2["exercises"]["written"] > 0
    assert len(row["basics"].links) == ii2["strands"]["basics"]["written"] > 0
    hrefs = [link for r in chapter_rows(page).values() for c in r.values() for link in c.links]
    assert hrefs
    for href in hrefs:
        assert href.startswith("../../course/"), href
        assert (out.parent / unquote(href)).resolve().is_file(), href


def test_links_are_relative_to_the_repository_root_on_stdout(real: Path) -> None:
    page, _ = page_and_json(real)
    row = chapter_rows(page)["II.2"]
    assert row["Chapter"].links == [f"course/{II2}/chapter.yaml"]


def test_course_text_is_escaped_and_the_page_fetches_nothing(real: Path) -> None:
    hostile = '<script>alert("x")</script><img src=http://example.invalid/x.png>'
    edit(real / II2 / "chapter.yaml", "title: From Recurrence to Attention", f"title: '{hostile}'")
    page, _ = page_and_json(real)
    assert "<script" not in page and "<img" not in page
    assert chapter_rows(page)["II.2"]["Chapter"].text == f"II.2 {hostile}"
    tags = " ".join(re.findall(r"<[^>]*>", page)).lower()
    style = page[page.index("<style>") : page.index("</style>")].lower()
    assert " src=" not in tags and "<link" not in tags and "<script" not in tags
    assert "@import" not in style and "url(" not in style
    assert not re.search(r'href="[a-z][a-z0-9+.-]*:', tags)  # no scheme: relative links only


def test_a_chapter_that_does_not_load_is_a_row_that_says_where(real: Path) -> None:
    chapter = real / II2 / "chapter.yaml"
    edit(chapter, "\nauthors:", "\n  authors:")
    page, data = page_and_json(real)
    row = chapter_rows(page)["II.2"]
    assert row["Owes"].number == "?"
    assert "does not load" in row["Chapter"].text
    assert f"course/{II2}/chapter.yaml:" in row["Chapter"].text and "CK101" in row["Chapter"].text
    assert all(not row[k].number for k in ("basics", "Problems", "Exercises"))
    assert data["incomplete"] is True and "not loaded" in page


def test_an_output_file_in_a_missing_folder_is_a_usage_error(real: Path) -> None:
    target = real.parent / "nowhere" / "dash.html"
    code, out = owed(real, "--format", "html", "--output-file", str(target))
    assert code == 2
    assert f"cannot write {target}: no folder" in out
    assert not target.parent.exists()


def test_an_output_file_replaces_the_old_page_and_other_formats_can_use_it(real: Path) -> None:
    target = real.parent / "owed.json"
    target.write_text("old", encoding="utf-8")
    code, out = owed(real, "--format", "json", "--output-file", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["chapters"]


def test_a_course_yaml_that_does_not_load_is_said_at_the_top(real: Path) -> None:
    edit(real / "course.yaml", "\nbooks:", "\n  books:")
    code, page = owed(real, "--format", "html")
    assert code == 1
    assert "<html" in page and "course/course.yaml:" in page and "CK101" in page
    assert "did not load" in page


def test_a_folder_named_like_a_url_scheme_is_still_a_relative_link(tmp_path: Path) -> None:
    root = tmp_path / "c:course"
    shutil.copytree(REPO / "course", root)
    code, page = owed(root, "--format", "html")
    assert code == 0
    hrefs = [link for row in chapter_rows(page).values() for c in row.values() for link in c.links]
    assert hrefs and all(href.startswith("./c:course/") for href in hrefs)


def _luminance(colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", [0, 1], ids=["light", "dark"])
def test_every_colour_pair_of_the_table_has_enough_contrast(scheme: int) -> None:
    """Any text colour on any background of the table (WCAG AA), and bars (3:1) in both schemes."""
    from coursekit.report.html_style import COLOURS

    colour = {name: pair[scheme] for name, pair in COLOURS.items()}
    for ground in ("bg", "head"):
        for text in ("fg", "muted", "link", "ok", "short"):
            assert contrast(colour[text], colour[ground]) >= 4.5, (text, ground)
        for fill in ("ok", "short"):
            assert contrast(colour[fill], colour[ground]) >= 3, (fill, ground)
    assert contrast("#777777", "#ffffff") < 4.5  # the measure can fail
