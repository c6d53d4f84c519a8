"""The safe YAML reader's two shortcuts give what the long way gives.

- Under ruamel's C parser, `_OneVersionResolver` skips ruamel's search for a `%YAML` version on
  every scalar (a search that can only end at YAML 1.2 there): every document reads the same
  data, at the same positions, as with ruamel's own resolver.
- `too_deep` skips the bracket scan of a text with too few brackets to nest past the limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.main import CParser  # type: ignore[attr-defined]

from coursekit.load import yamlparse, yamlsafe
from coursekit.load.yamlparse import parse_yaml
from coursekit.load.yamlsafe import MAX_DEPTH, LoadError

REPO = Path(__file__).resolve().parents[2]
FILES = sorted(
    path
    for folder in (REPO / "course", REPO / "tests")
    for path in folder.rglob("*")
    if path.suffix == ".yaml" or (path.suffix == ".md" and "lessons" in path.parts)
)

TRICKY = [
    "%YAML 1.1\n---\nanswer: yes\nold_octal: 010\nsexagesimal: 1:20\n",
    "%YAML 1.2\n---\nanswer: yes\nflag: true\nnothing: ~\n",
    "a: 0x1F\nb: 1e3\nc: .inf\nd: -.NaN\ne: 0o17\nf: 2001-12-14\ng: !!str 3\nh: ''\n",
    "- [1, {a: [null, Null, NULL]}]\n- {? complex : key}\n",
]


def _yaml_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":  # a lesson's front matter
        return text.split("---\n")[1] if text.startswith("---\n") else ""
    return text


def _read(text: str) -> object:
    try:
        data, source = parse_yaml(text, "t.yaml")
    except LoadError as exc:
        return ("error", exc.code, exc.message, exc.line, exc.column)
    return data, dict(source.values), dict(source.keys)


def _with_stock(texts: list[str]) -> list[object]:
    with pytest.MonkeyPatch.context() as patch:
        parser_type = type(yamlparse._yaml())
        patch.setattr(yamlparse, "_yaml", lambda: parser_type(typ="safe"))
        return [_read(text) for text in texts]


def test_the_c_parser_reads_with_the_one_version_resolver() -> None:
    if CParser is None:
        pytest.skip("ruamel.yaml.clib is not installed: ruamel's own resolver reads")
    assert yamlparse._yaml().Resolver is yamlparse._OneVersionResolver


def test_every_document_reads_as_with_ruamels_own_resolver() -> None:
    texts = [_yaml_of(path) for path in FILES] + TRICKY
    assert len(texts) > 50
    assert [_read(text) for text in texts] == _with_stock(texts)


def _scan(text: str) -> tuple[int, int] | None:
    """`too_deep` made to take the long way: a last line that is a comment holding more
    brackets than the limit passes the shortcut's count, and the scan stops at its `#`."""
    return yamlsafe.too_deep(text + "\n#" + "[" * (MAX_DEPTH + 1))


PIECES = st.sampled_from(["[", "{", "]", "}", "\n", " ", "# ", "a", ": ", "- ", "\t"])


@settings(max_examples=100, deadline=None)
@given(st.lists(PIECES, max_size=120), st.integers(0, 150), st.integers(0, 150))
def test_the_depth_shortcut_finds_what_the_full_scan_finds(
    pieces: list[str], squares: int, braces: int
) -> None:
    text = "x: " + "[" * squares + "{" * braces + "".join(pieces)
    assert yamlsafe.too_deep(text) == _scan(text)
