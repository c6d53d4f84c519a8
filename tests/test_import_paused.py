"""`coursekit.lazy.import_paused`: a run's heavy modules are imported with the cyclic garbage
collector paused, then frozen, and the collector is left as the caller had it.

Each case runs in its own interpreter: freezing would otherwise reach into the test process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import gc, json, sys
sys.path.insert(0, sys.argv[1])
from coursekit.lazy import import_paused
if sys.argv[2] == "caller-paused":
    gc.disable()
if sys.argv[2] == "already-imported":
    import quiet_module
frozen_before = gc.get_freeze_count()
failed = None
try:
    import_paused(*sys.argv[3:])
except Exception as exc:
    failed = type(exc).__name__
print(json.dumps({
    "enabled_while_importing": getattr(sys.modules.get("quiet_module"), "ENABLED", None),
    "enabled_after": gc.isenabled(),
    "froze": gc.get_freeze_count() > frozen_before,
    "imported": [name for name in sys.argv[3:] if name in sys.modules],
    "failed": failed,
}))
"""


def probe(folder: Path, case: str, *modules: str) -> dict[str, object]:
    (folder / "quiet_module.py").write_text(
        "import gc\nENABLED = gc.isenabled()\nHELD = [[] for _ in range(5000)]\n",
        encoding="utf-8",
    )
    (folder / "broken_module.py").write_text("raise ValueError('broken on import')\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder), case, *modules],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_modules_are_imported_paused_then_frozen_and_the_collector_runs_again(
    tmp_path: Path,
) -> None:
    result = probe(tmp_path, "plain", "quiet_module")
    assert result == {
        "enabled_while_importing": False,
        "enabled_after": True,
        "froze": True,
        "imported": ["quiet_module"],
        "failed": None,
    }


def test_a_failed_import_still_gives_the_collector_back(tmp_path: Path) -> None:
    result = probe(tmp_path, "plain", "broken_module")
    assert result["failed"] == "ValueError"
    assert result["enabled_after"] is True
    assert result["imported"] == []


@pytest.mark.parametrize(
    ("case", "enabled_after"),
    [("caller-paused", False), ("already-imported", True)],
)
def test_a_caller_that_paused_or_imported_already_is_left_as_it_was(
    tmp_path: Path, case: str, enabled_after: bool
) -> None:
    """A collector the caller paused stays paused and nothing is frozen for it; modules
    already imported cost nothing, not even a freeze."""
    result = probe(tmp_path, case, "quiet_module")
    assert result["enabled_after"] is enabled_after
    assert result["froze"] is False
    assert result["imported"] == ["quiet_module"]
