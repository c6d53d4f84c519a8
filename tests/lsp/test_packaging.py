"""`pip install` of coursekit is enough for `coursekit lsp`: its libraries are dependencies."""

from __future__ import annotations

import re
from importlib.metadata import requires

from click.testing import CliRunner

from coursekit import DISTRIBUTION
from coursekit.cli import main


def test_pygls_and_lsprotocol_are_plain_dependencies() -> None:
    plain = {
        re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower()
        for r in requires(DISTRIBUTION) or []
        if "extra ==" not in r
    }
    assert {"pygls", "lsprotocol"} <= plain


def test_the_lsp_command_is_listed() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and "lsp" in result.output.split()
