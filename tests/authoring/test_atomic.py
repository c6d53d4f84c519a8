"""Atomic writes: the old file or the new one, never a truncated one, even under SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from coursekit.atomic import atomic_write_text
from coursekit.load.yamlparse import parse_yaml


def _document(tag: str, lines: int) -> str:
    return "".join(f"key_{i}: {tag} line {i} " + "x" * 40 + "\n" for i in range(lines))


def test_writes_and_keeps_the_permission_bits(tmp_path: Path) -> None:
    target = tmp_path / "chapter.yaml"
    target.write_text("old: 1\n", encoding="utf-8")
    target.chmod(0o640)
    atomic_write_text(target, "new: 2\n")
    assert target.read_text(encoding="utf-8") == "new: 2\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["chapter.yaml"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "book.yaml"
    target.write_text("old: 1\n", encoding="utf-8")

    def refuse(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        atomic_write_text(target, "new: 2\n")
    assert target.read_text(encoding="utf-8") == "old: 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["book.yaml"]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from coursekit.atomic import atomic_write_text

    target, source = Path(sys.argv[1]), Path(sys.argv[2])
    text = source.read_text(encoding="utf-8")
    print("ready", flush=True)
    atomic_write_text(target, text)
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("attempt", range(6))
def test_sigkill_mid_write_leaves_old_or_new_never_a_mix(tmp_path: Path, attempt: int) -> None:
    old = _document("old", 2000)  # ~120 KB: 30 chunks of 4 KB
    new = _document("new", 3000)
    target = tmp_path / "chapter.yaml"
    target.write_text(old, encoding="utf-8")
    source = tmp_path / "new.txt"
    source.write_text(new, encoding="utf-8")
    env = {**os.environ, "COURSEKIT_TEST_WRITE_DELAY": "0.005"}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(source)],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    # kill somewhere between the first chunk and well after the last (about 0.25 s of writing)
    time.sleep(random.Random(attempt).uniform(0.0, 0.35) if attempt else 0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    content = target.read_text(encoding="utf-8")
    assert content in (old, new), f"torn file of {len(content)} characters"
    parse_yaml(content, "chapter.yaml")  # and it parses
    if attempt == 0:
        assert content == old  # killed mid-write: the old file is intact


def test_a_write_that_finishes_under_the_hook_is_complete(tmp_path: Path) -> None:
    target = tmp_path / "x.yaml"
    target.write_text("a: 1\n", encoding="utf-8")
    new = _document("new", 300)
    source = tmp_path / "new.txt"
    source.write_text(new, encoding="utf-8")
    env = {**os.environ, "COURSEKIT_TEST_WRITE_DELAY": "0.001"}
    subprocess.run([sys.executable, "-c", WRITER, str(target), str(source)], env=env, check=True)
    assert target.read_text(encoding="utf-8") == new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt", "x.yaml"]
