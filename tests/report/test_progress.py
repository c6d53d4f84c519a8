"""The terminal progress line: redrawn in place, erased at the end."""

from __future__ import annotations

import io

from coursekit.report.progress import TerminalProgress


def test_progress_redraws_one_line_and_erases_it() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream)
    for done in range(1, 4):
        progress(done, 3, object())
    text = stream.getvalue()
    assert "\n" not in text
    assert "running problem programs 1/3" in text
    assert "running problem programs 3/3" in text
    assert text.endswith("\r")  # the line is blanked, the cursor back at its start
    last = text.rstrip("\r").rsplit("\r", 1)[-1]
    assert last.strip() == ""
