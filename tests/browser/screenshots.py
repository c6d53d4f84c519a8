#!/usr/bin/env python3
"""The reference screenshots of the bundled course's dashboard, light and dark.

    .venv/bin/python tests/browser/screenshots.py      # rewrites docs/dashboard-{light,dark}.png

Run it after changing the dashboard's look (or the bundled course), look at the two images, and
commit them: tests/browser/test_dashboard.py renders the page again and compares.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from chromium_cdp import Browser, Page  # noqa: E402

from coursekit.cli import main  # noqa: E402

WIDTH = 1280
SCHEMES = ("light", "dark")


def reference(scheme: str) -> Path:
    return REPO / "docs" / f"dashboard-{scheme}.png"


def render(workdir: Path, *args: str) -> Path:
    """The bundled course's dashboard, from a copy of it (so no cache lands in the checkout)."""
    course = workdir / "course"
    if not course.exists():
        shutil.copytree(REPO / "course", course, ignore=shutil.ignore_patterns(".coursekit_cache"))
    page = workdir / "dashboard.html"
    result = CliRunner().invoke(
        main,
        ["owed", "--course", str(course), "--format", "html", "--output-file", str(page), *args],
    )
    if result.exit_code != 0:
        raise RuntimeError(f"owed exited {result.exit_code}: {result.output}")
    return page


def shoot(page: Page, html: Path, scheme: str) -> bytes:
    page.resize(WIDTH, 800)
    page.media(scheme)
    page.open(html)
    return page.screenshot()


def main_() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, Browser.start() as browser:
        html = render(Path(tmp))
        page = browser.new_page(WIDTH, 800)
        for scheme in SCHEMES:
            reference(scheme).write_bytes(shoot(page, html, scheme))
            print(f"wrote {reference(scheme).relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
