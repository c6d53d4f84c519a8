"""The configuration's catalogue of names is data, equal to what the rules and reporters define,
and the leaves (configuration, catalogue, loader codes, result store) import nothing above them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from coursekit.catalogue import REPORTER_NAMES, RULE_NAMES
from coursekit.config import ConfigError, parse_config
from coursekit.report import REPORTERS
from coursekit.rules import REGISTRY


def test_rule_names_match_the_registry() -> None:
    assert {code: rule.name for code, rule in REGISTRY.items()} == RULE_NAMES


def test_reporter_names_match_the_reporters() -> None:
    assert sorted(REPORTER_NAMES) == sorted(REPORTERS)


# module imported -> packages that must not be loaded as a consequence
_LEAVES = {
    "coursekit.config": ["coursekit.rules", "coursekit.report", "coursekit.load"],
    "coursekit.catalogue": ["coursekit.rules", "coursekit.report", "coursekit.config"],
    "coursekit.codes": ["coursekit.load", "coursekit.rules"],
    "coursekit.store": ["coursekit.rules", "coursekit.load"],
    "coursekit.load.loader": ["coursekit.rules", "coursekit.engine", "coursekit.cache"],
    "coursekit.suppress": ["coursekit.authoring"],
}

_PROBE = """
import importlib, json, sys
module, banned = sys.argv[1], json.loads(sys.argv[2])
importlib.import_module(module)
print(json.dumps(sorted(b for b in banned if b in sys.modules)))
"""


def test_leaves_do_not_load_the_layers_above_them() -> None:
    # One interpreter per leaf: sys.modules of this test session already holds everything.
    loaded: dict[str, list[str]] = {}
    for module, banned in _LEAVES.items():
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, module, json.dumps(banned)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        loaded[module] = json.loads(out)
    assert loaded == {module: [] for module in _LEAVES}


def test_unknown_selector_and_format_are_still_refused() -> None:
    with pytest.raises(ConfigError, match="matches no rule"):
        parse_config({"select": ["CK9999"]})
    with pytest.raises(ConfigError, match="output-format"):
        parse_config({"output-format": "yaml"})
    assert parse_config({"select": ["CK3", "apparatus-unresolved"]}).select
