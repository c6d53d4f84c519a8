"""A spare worker warms up only while it waits: a job already there runs at once.

When programs queue (a cold check of a large course), the next job is written to a spare
while it is still confining itself; warming up then only delayed the job and cost the cores
the jobs were queuing for (~3 ms of CPU per job).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import coursekit.exec

EXEC_DIR = Path(coursekit.exec.__file__).parent


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """`_worker` as the server imports it: its helpers by bare name, from beside it."""
    monkeypatch.syspath_prepend(str(EXEC_DIR))
    yield importlib.import_module("_worker")
    for name in ("_worker", "_frames", "_sandbox"):
        sys.modules.pop(name, None)


@pytest.fixture
def warm_ups(worker: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """One item per warm-up the worker would have run (counted, not run)."""
    calls: list[None] = []
    monkeypatch.setattr(worker, "warm_up", lambda: calls.append(None))
    return calls


@pytest.fixture
def job_pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_an_idle_spare_warms_up(
    worker: ModuleType, warm_ups: list[None], job_pipe: tuple[int, int]
) -> None:
    assert worker.warm_up_while_idle(job_pipe[0]) is True
    assert len(warm_ups) == 1


def test_a_job_already_waiting_is_not_delayed(
    worker: ModuleType, warm_ups: list[None], job_pipe: tuple[int, int]
) -> None:
    os.write(job_pipe[1], b"\0\0\0\x02{}")
    assert worker.warm_up_while_idle(job_pipe[0]) is False
    assert warm_ups == []
    assert os.read(job_pipe[0], 16) == b"\0\0\0\x02{}"  # the job is left for the worker to read


def test_a_discarded_spare_does_not_warm_up(
    worker: ModuleType, warm_ups: list[None], job_pipe: tuple[int, int]
) -> None:
    os.close(job_pipe[1])  # the server closed the job's pipe: no job will come
    assert worker.warm_up_while_idle(job_pipe[0]) is False
    assert warm_ups == []
