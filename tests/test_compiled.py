"""`coursekit.compiled`: dataclasses' methods and regular expressions compiled once, then taken
from the kept file by later processes, and what they make behaves as it did.

Each case runs in its own interpreter: installing the cache reaches into `dataclasses`, and the
point is what a second process finds."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coursekit import compiled, framed

# Defines dataclasses of many shapes through the installed cache (in the folder argv[1] names),
# exercises them, and prints what they did and how many texts were compiled meanwhile.
PROBE = r"""
import dataclasses, json, sys
import re
from coursekit import compiled as kept_compiled
kept_compiled.install(sys.argv[1])
compiled = []
sys.addaudithook(lambda event, args: event == "compile" and compiled.append(1))
parsed = []
parse = re._parser.parse
re._parser.parse = lambda *args: parsed.append(1) or parse(*args)

@dataclasses.dataclass
class Plain:
    x: int
    y: str = "y"
    items: list = dataclasses.field(default_factory=list)
    hidden: int = dataclasses.field(default=7, init=False, repr=False)

@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Point:
    a: int
    b: int = 0

@dataclasses.dataclass(kw_only=True)
class Named:
    name: str
    count: int = 1
    def __post_init__(self):
        self.count *= 2

from coursekit.records import record

@record(frozen=True, slots=True)
class Kept:
    path: str
    line: int = 1

count = len(compiled)
patterns = [
    re.compile(r"(?P<word>[a-z]+)-(\d+)", re.I),
    re.compile(r'''
        ^(?P<key>\w+)   # a key
        \s*=\s*(.*)$    # and its value
    ''', re.VERBOSE | re.MULTILINE),
    re.compile(rb"[\x00-\x1f]+(?=x)"),
    re.compile("(?i)stra\u00dfe|\u0130"),
]
found = [
    patterns[0].match("ABC-42").groupdict(), patterns[0].match("ABC-42").group(2),
    patterns[1].findall("a = 1\nbb=two"), patterns[1].groupindex["key"],
    patterns[2].search(b"ab\x01\x02x").span(),
    bool(patterns[3].match("STRASSE")), bool(patterns[3].match("\u0130")), patterns[3].flags,
]
try:
    re.compile("(unclosed")
    refused = None
except re.error as exc:
    refused = str(exc)
plain = Plain(1)
plain.items.append(3)
try:
    Point(1).a = 5
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
print(json.dumps({
    "compiled": count,
    "parsed": len(parsed),
    "patterns": [found, refused],
    "plain": [repr(plain), plain == Plain(1, "y", [3]), Plain(2).items, plain.hidden],
    "point": [repr(Point(1, 2)), sorted([Point(2), Point(1, 5)]) == [Point(1, 5), Point(2)],
              hash(Point(1)) == hash(Point(1)), frozen],
    "named": [repr(Named(name="n")), Named(name="n", count=2).count],
    "kept": [repr(Kept("p")), Kept("p") == Kept("p", 1)],
}))
"""


def interpreter(script: str, *args: str, **env: str) -> Any:
    """What `script` prints (JSON) in a fresh interpreter that writes bytecode unless `env`
    says not."""
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**inherited, **env},
    )
    return json.loads(done.stdout)


def probe(folder: Path, **env: str) -> dict[str, object]:
    """PROBE's findings, the cache kept in `folder`."""
    result: dict[str, object] = interpreter(PROBE, str(folder), **env)
    return result


def frame(value: object, magic: bytes = compiled.MAGIC) -> bytes:
    """A file of the kept format holding `value`."""
    return b"".join(framed.chunks(magic, [value]))


def flipped(data: bytes) -> bytes:
    """`data` with one bit of its middle byte flipped."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1 :]


def behaviour(result: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in result.items() if k not in ("compiled", "parsed")}


def test_a_later_process_compiles_nothing_a_first_one_compiled(tmp_path: Path) -> None:
    first = probe(tmp_path)
    assert first["compiled"] > 10  # type: ignore[operator]  # each class's methods
    assert first["parsed"] >= 4  # type: ignore[operator]  # each pattern, the refused one too
    kept = tmp_path / compiled.file_name()
    assert kept.is_file()
    second = probe(tmp_path)
    assert second["compiled"] == 0
    assert second["parsed"] == 1  # the pattern that does not compile, refused again
    assert behaviour(second) == behaviour(first)
    assert behaviour(first) == {
        "plain": ["Plain(x=1, y='y', items=[3])", True, [], 7],
        "point": ["Point(a=1, b=2)", True, True, True],
        "named": ["Named(name='n', count=2)", 4],
        "kept": ["Kept(path='p', line=1)", True],
        "patterns": [
            [
                {"word": "ABC"},
                "42",
                [["a", "1"], ["bb", "two"]],
                1,
                [2, 4],
                False,  # (re matches case by case: no "SS" for "ß")
                True,
                34,  # re.I | re.U
            ],
            "missing ), unterminated subpattern at position 0",
        ],
    }


def test_without_the_cache_the_same_classes_behave_the_same(tmp_path: Path) -> None:
    cached = probe(tmp_path)
    plain = interpreter(PROBE.replace("kept_compiled.install(sys.argv[1])", ""), "-")
    assert behaviour(plain) == behaviour(cached)


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"not a cache at all",
        compiled.MAGIC + b"\x00\x01broken marshal",
        frame([1, 2, 3]),  # not a table
        frame({}, b"coursekit-compiled\0" + b"3\0" + b"3.0.0 another interpreter\0"),
        frame({"methods": [1], "patterns": {(True, "x", 0): "no"}}),
        flipped(frame({"methods": {"def f(): pass": marshal.dumps(compile("pass", "", "exec"))}})),
    ],
    ids=[
        "empty",
        "foreign",
        "broken",
        "not-a-table",
        "another-interpreter",
        "wrong-shapes",
        "a-flipped-bit",
    ],
)
def test_a_damaged_or_foreign_file_is_read_as_empty_and_written_again(
    tmp_path: Path, damage: bytes
) -> None:
    kept = tmp_path / compiled.file_name()
    kept.write_bytes(damage)
    first = probe(tmp_path)
    assert first["compiled"] > 10  # type: ignore[operator]
    assert first["parsed"] >= 4  # type: ignore[operator]
    assert kept.read_bytes().startswith(compiled.MAGIC)
    again = probe(tmp_path)
    assert (again["compiled"], again["parsed"]) == (0, 1)


def test_an_entry_that_is_not_code_or_a_pattern_is_compiled_again(tmp_path: Path) -> None:
    first = probe(tmp_path)
    kept = tmp_path / compiled.file_name()
    tables = compiled.read(str(kept))
    spoiled = {
        "methods": {text: marshal.dumps(12345) for text in tables["methods"]},
        # opcodes `_sre` refuses (it validates them): the pattern is compiled again
        "patterns": {key: (0, [999, 999], 0, {}, ()) for key in tables["patterns"]},
    }
    kept.write_bytes(frame(spoiled))
    again = probe(tmp_path)
    assert again["compiled"] == len(tables["methods"])
    assert again["parsed"] == first["parsed"]
    assert behaviour(again) == behaviour(first)


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    assert probe(tmp_path, PYTHONDONTWRITEBYTECODE="1")["compiled"] > 10  # type: ignore[operator]
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_folder_costs_only_the_compiling(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("a file where the folder would be", encoding="utf-8")
    assert probe(blocked)["compiled"] > 10  # type: ignore[operator]
    assert blocked.read_text(encoding="utf-8") == "a file where the folder would be"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file-not-folder"]


def test_a_file_grown_past_its_bound_keeps_what_the_saving_process_used(tmp_path: Path) -> None:
    kept = tmp_path / compiled.file_name()
    stale = {
        f"def f{n}(): pass": marshal.dumps(compile("pass", "<string>", "exec"))
        for n in range(compiled.MAX_ENTRIES)
    }
    kept.write_bytes(frame({"methods": stale, "patterns": {}}))
    probe(tmp_path)  # compiles its own texts, which pass the bound
    table = compiled.read(str(kept))["methods"]
    assert 10 < len(table) < 100
    assert not any(text.startswith("def f") for text in table)
    assert probe(tmp_path)["compiled"] == 0


def test_patterns_let_go_of_past_the_bound_take_their_programs_with_them(tmp_path: Path) -> None:
    kept = tmp_path / compiled.file_name()
    entry: tuple[object, ...] = (0, [1, 2, 3], 0, {}, ())
    stale = {(True, f"stale{n}", 0): entry for n in range(compiled.MAX_ENTRIES)}
    kept.write_bytes(frame({"methods": {}, "patterns": stale, "programs": {7: True}}))
    probe(tmp_path)  # compiles its own patterns, which pass the bound
    tables = compiled.read(str(kept))
    assert 3 <= len(tables["patterns"]) < 100
    assert not any(str(key[1]).startswith("stale") for key in tables["patterns"])
    assert tables["programs"] == {compiled._program(e): True for e in tables["patterns"].values()}


def test_the_cache_lives_where_python_keeps_coursekits_bytecode() -> None:
    folder = Path(compiled.default_folder())
    assert folder.name == "__pycache__"
    assert folder.parent == Path(compiled.__file__).resolve().parent


def test_the_coursekit_command_installs_it_once_the_warm_path_has_missed(tmp_path: Path) -> None:
    code = (  # (told at exit: the command leaves without returning, coursekit.__main__.leave)
        "import atexit, sys, dataclasses, re\n"
        "from coursekit.__main__ import main\n"
        "def tell():\n"
        "    installed = 'exec' in vars(dataclasses)"
        " and re._compiler.compile.__module__ != 're._compiler'\n"
        "    sys.stderr.write('installed: %s\\n' % installed)\n"
        "atexit.register(tell)\n"
        "sys.argv = ['coursekit', 'explain', 'CK101']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.stderr.strip().splitlines()[-1] == "installed: True"


# Compiles one pattern while compiling another (as a warning raised by the parser could), then
# says what both patterns do and how many patterns were parsed.
NESTED = r"""
import json, re, sys
from coursekit import compiled
compiled.install(sys.argv[1])
parse = re._parser.parse
parsed = []

def parse_and_nest(pattern, flags=0, *rest):
    parsed.append(pattern)
    if sys.argv[2] == "nest" and pattern == "outer(x)":
        re.compile(r"inner(\d)(\d)")
    return parse(pattern, flags, *rest)

re._parser.parse = parse_and_nest
outer, inner = re.compile("outer(x)"), re.compile(r"inner(\d)(\d)")
print(json.dumps([
    outer.groups, bool(outer.match("outerx")), inner.groups, inner.match("inner45").groups(),
    len(parsed),
]))
"""


def test_a_pattern_compiled_while_compiling_another_is_kept_under_its_own_key(
    tmp_path: Path,
) -> None:
    def run(mode: str) -> list[object]:
        result: list[object] = interpreter(NESTED, str(tmp_path), mode)
        return result

    assert run("nest") == [1, True, 2, ["4", "5"], 2]
    assert run("plain") == [1, True, 2, ["4", "5"], 0]  # both kept, each under its own key


def test_a_file_whose_checksum_fails_is_read_as_empty(tmp_path: Path) -> None:
    # marshal does not guard against damaged input: a flipped bit inside a kept code object
    # could load as other code, so the frame's CRC-32 is checked before anything is read
    kept = tmp_path / compiled.file_name()
    whole = frame({"methods": {"def f(): pass": marshal.dumps(compile("pass", "", "exec"))}})
    kept.write_bytes(whole)
    assert list(compiled.read(str(kept))["methods"]) == ["def f(): pass"]
    for at in range(len(compiled.MAGIC), len(whole)):
        kept.write_bytes(whole[:at] + bytes([whole[at] ^ 1]) + whole[at + 1 :])
        assert compiled.read(str(kept)) == {"methods": {}, "patterns": {}, "programs": {}}, at


# Compiles one character class spelt in the order argv[2] gives (as a set joined in its
# iteration order would be), and prints whether the process will write the kept file.
SPELLED = r"""
import json, re, sys
from coursekit import compiled
kept = compiled.install(sys.argv[1])
pattern = re.compile("[" + re.escape(sys.argv[2]) + "]")
print(json.dumps([bool(pattern.match("%")), bool(kept.new["patterns"])]))
"""


def test_another_spelling_of_a_kept_program_is_not_kept(tmp_path: Path) -> None:
    """markdown-it-py joins a set of characters into a class in the set's order, which string
    hashing changes from process to process: each spelling was kept, and the file written
    again, at the end of nearly every run that parsed Markdown."""

    def run(chars: str) -> list[bool]:
        result: list[bool] = interpreter(SPELLED, str(tmp_path), chars)
        return result

    kept = tmp_path / compiled.file_name()
    assert run("%$#") == [True, True]  # new: kept
    written = kept.read_bytes()
    assert run("#%$") == [True, False]  # the same program: nothing to keep
    assert run("$#%") == [True, False]
    assert kept.read_bytes() == written
    assert run("%$#&") == [True, True]  # another program
    assert len(compiled.read(str(kept))["patterns"]) == 2
