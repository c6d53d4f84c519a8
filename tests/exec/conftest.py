from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
if str(SRC) not in sys.path:  # runs from a checkout without an installed coursekit
    sys.path.insert(0, str(SRC))

from coursekit.exec import Runner  # noqa: E402


@pytest.fixture(scope="session")
def runner() -> Iterator[Runner]:
    """One pool of fork servers for the whole module: start-up is paid once."""
    with Runner(parallel=2) as pool:
        yield pool
