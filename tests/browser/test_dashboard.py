"""The dashboard in a real browser: headless Chromium (Debian's `chromium`), one per module.

The DOM Chromium builds holds one row per chapter with the numbers of `owed --format json`; the
bundled course looks like docs/dashboard-{light,dark}.png (within a tolerance; regenerate them
with `.venv/bin/python tests/browser/screenshots.py`); the page passes accessibility checks run
inside it, in both colour schemes; and it prints.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromium_cdp import Browser, Page, chromium
from click.testing import CliRunner
from page_checks import accessibility_problems, compare_png
from screenshots import SCHEMES, WIDTH, reference, render, shoot

from coursekit.cli import main
from dashboard_dom import SEED_COUNTERS, chapter_rows, numbers_of
from helpers import edit

REPO = Path(__file__).resolve().parents[2]
II1 = "II/1-attention-stripped-to-its-bones"
II2 = "II/2-from-recurrence-to-attention"

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="chromium is not installed (apt-get install chromium; .ci/run installs it)",
)

# A pixel of the 4x-shrunk screenshots differs when a channel moves by more than 48/255 (glyph
# edges antialiased or hinted differently move a block's average less than that); up to 0.01% of
# them may differ. One count changed, "3/9" to "9/9" with its bar, is 41 of 68,480 (0.06%).
BUDGET = 0.0001


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser.start() as started:
        yield started


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(tmp_path_factory.mktemp("site"))


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    opened = browser.new_page(WIDTH, 800)
    yield opened
    opened.close()


def test_the_dom_holds_one_row_per_chapter_with_the_numbers_of_the_json(
    page: Page, site: Path
) -> None:
    result = CliRunner().invoke(
        main, ["owed", "--course", str(site.parent / "course"), "--format", "json"]
    )
    data = json.loads(result.output)
    page.open(site)
    rows = chapter_rows(page.evaluate("document.documentElement.outerHTML"))
    assert list(rows) == [chapter["id"] for chapter in data["chapters"]]
    for chapter in data["chapters"]:
        for column, number in numbers_of(chapter).items():
            assert rows[chapter["id"]][column].number == number, (chapter["id"], column)
    shown = page.evaluate("document.querySelectorAll('main tbody tr').length")
    assert shown == len(data["chapters"]) + 1  # and the course total


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_bundled_course_looks_like_its_reference(page: Page, site: Path, scheme: str) -> None:
    shot = shoot(page, site, scheme)
    result = compare_png(page, reference(scheme).read_bytes(), shot)
    assert result["size"] is None, f"size changed {result['size']}: regenerate the references?"
    assert result["differ"] <= BUDGET * result["pixels"], result


def test_the_comparison_sees_a_real_change(page: Page, site: Path) -> None:
    light = reference("light").read_bytes()
    page.media("light")
    page.open(site)
    # One count wrong: II.2's basics read 9/9 with a full bar instead of 3/9.
    page.evaluate(
        """(() => { const count = document.querySelector('tr[id="II.2"] td b[style]');
        count.textContent = '9/9'; count.style.setProperty('--w', '100%');
        count.parentElement.className = 'ok'; })()"""
    )
    changed = page.screenshot()
    result = compare_png(page, light, changed)
    assert result["size"] is None and result["differ"] > BUDGET * result["pixels"], result
    assert (
        compare_png(page, light, reference("dark").read_bytes())["differ"] > 0.5 * result["pixels"]
    )


@pytest.mark.parametrize("scheme", SCHEMES)
def test_accessibility_checks_find_nothing(page: Page, site: Path, scheme: str) -> None:
    page.media(scheme)
    page.open(site)
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
    assert accessibility_problems(page) == []


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_course_in_trouble_is_accessible_too(page: Page, tmp_path: Path, scheme: str) -> None:
    """A chapter that does not load (its failures listed), a stub, unverified problems."""
    course = tmp_path / "course"
    shutil.copytree(REPO / "course", course)
    edit(course / II1 / "chapter.yaml", "\nauthors:", "\n  authors:")
    edit(
        course / II2 / "lessons/model-width.md", "reading_time: 4", "reading_time: 4\nstatus: stub"
    )
    html = tmp_path / "trouble.html"
    args = ["--no-exec", "--format", "html", "--output-file", str(html)]
    assert CliRunner().invoke(main, ["owed", "--course", str(course), *args]).exit_code == 1
    page.media(scheme)
    page.open(html)
    assert page.evaluate("document.querySelectorAll('.fail li, tr.broken').length") == 2
    assert "1 stub" in page.evaluate("document.querySelector('tr[id=\"II.2\"]').innerText")
    assert accessibility_problems(page) == []


def test_accessibility_checks_find_planted_defects(page: Page, site: Path) -> None:
    page.media("light")
    page.open(site)
    page.evaluate(
        """(() => {
        const cell = document.querySelector('tr[id="II.2"] td');
        cell.insertAdjacentHTML('beforeend',
          '<span style="color:#c8c8c8">faint</span><span role="img"></span><img src="">' +
          '<b style="--w:50%"></b>');
        document.querySelector('tr[id="II.2"] td b[style]').style.setProperty('--c', '#eeeeee');
        document.querySelector('thead th').removeAttribute('scope');
    })()"""
    )
    found = accessibility_problems(page)
    assert any('"faint" contrast' in p for p in found), found
    assert any("image without a text alternative" in p for p in found), found
    assert any("img without alt" in p for p in found), found
    assert any("II.2: bar contrast" in p for p in found), found
    assert any("II.2: a bar without text" in p for p in found), found
    assert any('column header "Chapter" has no scope' in p for p in found), found


def test_it_prints_with_its_bars(page: Page, site: Path) -> None:
    page.open(site)
    page.media("dark", media="print")  # print uses the light colours whatever the scheme
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(255, 255, 255)"
    assert page.evaluate(
        "getComputedStyle(document.querySelector('td b[style]')).printColorAdjust"
    ) == ("exact")
    assert accessibility_problems(page) == []
    assert page.pdf().startswith(b"%PDF")


def test_the_seed_chapter_reads_as_the_seed_page(page: Page, tmp_path: Path) -> None:
    seed = Path(__file__).resolve().parents[1] / "fixtures" / "seed-course" / "course"
    html = tmp_path / "seed.html"
    args = ["--no-exec", "--format", "html", "--chapter", "II.2", "--output-file", str(html)]
    result = CliRunner().invoke(main, ["owed", "--no-cache", "--course", str(seed), *args])
    assert result.exit_code == 0, result.output
    page.open(html)
    # What a reader sees (innerText follows the rendering), header by header.
    shown = page.evaluate(
        """(() => { const table = document.querySelector('table');
        const heads = Array.from(table.tHead.rows[0].cells, th => th.innerText.trim());
        const row = table.querySelector('tr[id="II.2"]');
        return Object.fromEntries(Array.from(row.cells, (cell, i) =>
          [heads[i], (cell.querySelector('b') || cell).innerText.trim()])); })()"""
    )
    assert {k: v for k, v in shown.items() if k not in ("Chapter", "Book 0 waits for")} == {
        "Maturity": "M2 Substantive",
        "Status": "draft",
        **SEED_COUNTERS,
    }
