"""Structure-aware mutations of a course tree, each reproducible from one seed.

A mutation knows what it is mutating: a YAML file is parsed and one node of its data is
replaced, removed or duplicated (long names, huge and odd numbers, deep nesting, wrong types,
unknown keys), or its text is broken (tabs, unclosed brackets, alias bombs, truncation, odd
bytes); a Markdown lesson gets its front matter or its body mutated (dangling and huge
references, broken maths, broken suppressions); the tree gets odd file names, stray files and
folders, symlinks and missing files. Every change goes through a `Workspace`, which can put
the tree back exactly as it was.
"""

from __future__ import annotations

import io
import os
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

ODD_STRINGS = [
    "",
    " ",
    "\t",
    "null",
    "~",
    "yes",
    "0x1F",
    "1e309",
    "-0",
    "NaN",
    "II.",
    "II.2.",
    ".2",
    "0.LA.",
    "0.LA.99999",
    "II.0",
    "Ⅱ.2",
    "ii.2",
    "\u202eevil",
    "é" * 40,
    "🙂" * 30,
    "\x00",
    "\x1b[31mred",
    "a\nb",
    "$\\frac{1}{",
    "{{ }}",
    "[x](fig:II.2/0)",
    "../../etc/passwd",
    "/absolute",
    "con",
    "a" * 200,
]


@dataclass
class Workspace:
    """The course tree under `root`; every mutation is recorded so `restore` can undo it."""

    root: Path
    pristine: dict[str, bytes] = field(default_factory=dict)  # relative path -> original bytes
    touched: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.pristine:
            self.pristine = read_tree(self.root)

    def files(self, suffix: str = "") -> list[str]:
        return sorted(
            p
            for p in self.pristine
            if p.endswith(suffix)
            and p.startswith("course/")
            and not p.endswith("/")
            and (self.root / p).is_file()  # not removed or replaced by an earlier mutation
            and not (self.root / p).is_symlink()
        )

    def read(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def write(self, rel: str | bytes, data: bytes) -> None:
        path = self._path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.touched.add(os.fsdecode(os.fsencode(path.relative_to(self.root))))
        if path.is_symlink() or path.is_dir():
            _remove(path)
        path.write_bytes(data)

    def remove(self, rel: str) -> None:
        self.touched.add(rel)
        _remove(self.root / rel)

    def symlink(self, rel: str, target: str) -> None:
        path = self.root / rel
        self.touched.add(rel)
        _remove(path)
        path.symlink_to(target)

    def mkdir(self, rel: str | bytes) -> None:
        path = self._path(rel)
        self.touched.add(os.fsdecode(os.fsencode(path.relative_to(self.root))))
        path.mkdir(parents=True, exist_ok=True)

    def restore(self) -> None:
        """Put the tree back exactly as it was: touched paths first, then anything else."""
        for rel in sorted(self.touched, key=len, reverse=True):
            path = self.root / rel
            _remove(path)
            if rel in self.pristine:
                path.write_bytes(self.pristine[rel])
        self.touched.clear()
        # and whatever else changed (by the command under test, say): undone too
        now = read_tree(self.root)
        for rel in sorted(set(now) - set(self.pristine), key=len, reverse=True):
            _remove(self.root / rel.rstrip("/"))
        for rel, data in self.pristine.items():
            if not rel.endswith("/") and now.get(rel) != data:
                _remove(self.root / rel)
                (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
                (self.root / rel).write_bytes(data)

    def _path(self, rel: str | bytes) -> Path:
        return Path(os.fsdecode(os.path.join(os.fsencode(self.root), os.fsencode(rel))))


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file (and symlink, as its target) under root, except the cache folder."""
    result: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".coursekit_cache"]
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = Path(folder) / name
            rel = _rel(path, root)
            if path.is_symlink():
                result[rel] = b"-> " + os.fsencode(os.readlink(path))
            else:
                result[rel] = path.read_bytes()
        result.update({_rel(Path(folder) / d, root) + "/": b"" for d in dirs})
    return result


# YAML data mutations ---------------------------------------------------------------------------

_yaml = YAML(typ="safe", pure=True)
_yaml.default_flow_style = False


def _load(text: bytes) -> Any:
    if len(re.findall(rb"\*\w", text)) > 20:  # an alias bomb: expanding it would hang the fuzzer
        return None
    try:
        return _yaml.load(text)
    except (YAMLError, ValueError, RecursionError):
        return None


def _dump(data: Any) -> bytes:
    stream = io.StringIO()
    _yaml.dump(data, stream)
    text = stream.getvalue().encode("utf-8")
    return re.sub(rb"'?__HUGE_(\d+)__'?", lambda m: b"7" * int(m[1]), text)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every node's path in `data` (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data))
    for key, value in items:
        found.append((*prefix, key))
        found.extend(_paths(value, (*prefix, key)))
    return found


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _value(rng: random.Random, kind: str) -> Any:
    if kind == "long-name":
        return rng.choice("abcxyz") * rng.randint(100, 250)
    if kind == "name-over-255-bytes":
        return "n" * rng.randint(256, 600)
    if kind == "big-number":  # past 255 digits too: used as a name, it must be refused cleanly
        return int("9" * rng.randint(19, 400))
    if kind == "number-over-4300-digits":  # Python itself will not str() it: see _dump
        return f"__HUGE_{rng.randint(4301, 5200)}__"
    if kind == "odd-number":
        return rng.choice([-1, 0, -(2**63), 2**64, 1e308, -1e-308, float("inf"), float("nan")])
    if kind == "deep-nesting":
        return _nested(rng.randint(10, 60), rng.choice([1, "x", 2.5]))
    if kind == "nesting-65-deep":
        return _nested(rng.randint(65, 120), 1)
    if kind == "odd-string":
        return rng.choice(ODD_STRINGS)
    if kind == "wrong-type":
        return rng.choice([None, True, [], {}, [1, 2], {"a": 1}, 3.5, "text"])
    raise ValueError(kind)


VALUE_KINDS = [
    "long-name",
    "name-over-255-bytes",
    "big-number",
    "number-over-4300-digits",
    "odd-number",
    "deep-nesting",
    "nesting-65-deep",
    "odd-string",
    "wrong-type",
]


def mutate_data(rng: random.Random, data: Any, kind: str) -> str:
    """Change one node of `data` in place; a description of what changed."""
    paths = _paths(data)
    if not paths:
        return "nothing to mutate"
    path = rng.choice(paths)
    parent = _parent(data, path)
    key = path[-1]
    where = "/".join(str(p) for p in path)
    if kind == "delete-node":
        del parent[key]
        return f"deleted {where}"
    if kind == "duplicate-node" and isinstance(parent, list):
        parent.insert(key, parent[key])
        return f"duplicated {where}"
    if kind == "unknown-key" and isinstance(parent, dict):
        parent[rng.choice(["titel", "extra", "ids", "x" * 80])] = "surprise"
        return f"added an unknown key beside {where}"
    if kind == "rename-key" and isinstance(parent, dict):
        parent[str(_value(rng, rng.choice(["odd-string", "long-name"])))] = parent.pop(key)
        return f"renamed key {where}"
    value_kind = kind if kind in VALUE_KINDS else rng.choice(VALUE_KINDS[-3:])
    parent[key] = _value(rng, value_kind)
    return f"{where} := {value_kind}"


# Text mutations --------------------------------------------------------------------------------


def mutate_text(rng: random.Random, data: bytes, kind: str) -> tuple[bytes, str]:
    at = rng.randint(0, len(data))
    if kind == "truncate":
        return data[:at], f"truncated at byte {at}"
    if kind == "odd-bytes":
        junk = rng.choice([b"\xff\xfe", b"\x00", b"\xc3", b"\xed\xa0\x80", b"\r", b"\x1b", b"\t"])
        return data[:at] + junk + data[at:], f"inserted {junk!r} at byte {at}"
    if kind == "bom-crlf":
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), "BOM and CRLF line ends"
    if kind == "yaml-syntax":
        junk = rng.choice(
            [b"\n\t- tab\n", b"\nkey: [unclosed\n", b"\n: no key\n", b"\n{{{{\n", b"\n- &a [*a]\n"]
        )
        return data[:at] + junk + data[at:], f"inserted {junk!r} at byte {at}"
    if kind == "alias-bomb":
        bomb = b"\nbomb0: &b0 [x, x, x, x, x, x, x, x, x]\n" + b"".join(
            b"bomb%d: &b%d [*b%d, *b%d, *b%d, *b%d, *b%d, *b%d, *b%d, *b%d, *b%d]\n"
            % (i, i, *([i - 1] * 9))
            for i in range(1, 9)
        )
        return data + bomb, "appended an alias bomb"
    if kind == "duplicate-lines":
        lines = data.splitlines(keepends=True)
        if not lines:
            return data, "empty"
        i = rng.randrange(len(lines))
        return b"".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]), f"duplicated line {i + 1}"
    if kind == "markdown-body":
        junk = rng.choice(MARKDOWN_JUNK)(rng)
        return data[:at] + junk + data[at:], f"inserted {junk[:60]!r} at byte {at}"
    raise ValueError(kind)


MARKDOWN_JUNK: list[Callable[[random.Random], bytes]] = [
    lambda r: b"[see](fig:II.2/%d)" % r.choice([0, 99, 10**30]),
    lambda r: b"[see](prop:II.2/%d)" % r.choice([0, 7, 10**40]),
    lambda r: b"[see](fig:%s)" % r.choice([b"", b"x", b"-1", b"II.2/", b"9" * 300]),
    lambda r: b"[see](lesson:%s)" % r.choice([b"nope", b"II.2/nope", b"II.9/x", b"a" * 200]),
    lambda r: b"[see](apparatus:0.%s)" % r.choice([b"LA.99", b"ZZ.01", b"LA.", b"LA.1e5"]),
    lambda r: b"Prop. %d and Fig. %d" % (r.randint(0, 10**6), r.randint(0, 10**6)),
    lambda r: r.choice([b"$\\frac{1}{", b"$$", b"$a_{", b"\\[ \\]", b"$\\sqrt[3]{x}$", b"$}$"]),
    lambda r: b"\n" + b"> " * r.randint(10, 200) + b"deep\n",
    lambda r: b"\n" + b"  " * r.randint(10, 200) + b"- deep\n",
    lambda r: b"\n" + b"#" * r.randint(1, 12) + b" " + b"h" * r.randint(0, 3000) + b"\n",
    lambda r: b"<!-- coursekit: ignore[" + r.choice([b"", b"CK", b"CK999", b"x" * 50]) + b"] -->",
    lambda r: b"<!-- coursekit: ignore-start[CK2] -->",
    lambda r: b"\n---\ntitle: again\n---\n",
    lambda r: b"`" * r.randint(1, 9) + b"code",
]


# Choosing and applying a mutation -------------------------------------------------------------

YAML_KINDS = [
    *VALUE_KINDS,
    "delete-node",
    "duplicate-node",
    "unknown-key",
    "rename-key",
]
TEXT_KINDS = ["truncate", "odd-bytes", "bom-crlf", "yaml-syntax", "alias-bomb", "duplicate-lines"]
TREE_KINDS = [
    "odd-file-name",
    "non-utf8-file-name",
    "stray-file",
    "missing-file",
    "symlink",
    "file-becomes-folder",
]
FRONT = b"---\n"


def choose_kinds(rng: random.Random, count: int) -> list[str]:
    kinds = [*YAML_KINDS, *TEXT_KINDS, *TREE_KINDS, "markdown-body", "front-matter"]
    return [rng.choice(kinds) for _ in range(count)]


def apply(rng: random.Random, ws: Workspace, kind: str) -> str:
    """Apply one mutation of `kind` to a random fitting file; its description."""
    if kind in TREE_KINDS:
        return _mutate_tree(rng, ws, kind)
    if kind in ("markdown-body", "front-matter"):
        rel = rng.choice(ws.files(".md"))
        data = ws.read(rel)
        if kind == "markdown-body":
            new, what = mutate_text(rng, data, kind)
        else:
            new, what = _mutate_front_matter(rng, data, YAML_KINDS)
        ws.write(rel, new)
        return f"{rel}: {what}"
    rel = rng.choice(ws.files(".yaml"))
    data = ws.read(rel)
    if kind in TEXT_KINDS:
        new, what = mutate_text(rng, data, kind)
        ws.write(rel, new)
        return f"{rel}: {what}"
    tree = _load(data)
    if tree is None:  # already broken by an earlier mutation: break it some more
        new, what = mutate_text(rng, data, "odd-bytes")
        ws.write(rel, new)
        return f"{rel}: {what}"
    what = mutate_data(rng, tree, kind)
    ws.write(rel, _dump(tree))
    return f"{rel}: {what}"


def _mutate_front_matter(rng: random.Random, data: bytes, kinds: list[str]) -> tuple[bytes, str]:
    if not data.startswith(FRONT) or FRONT not in data[4:]:
        return mutate_text(rng, data, "odd-bytes")
    end = data.index(FRONT, 4)
    front, body = data[4:end], data[end + 4 :]
    if rng.random() < 0.2:
        return front + body, "front matter delimiters removed"
    tree = _load(front)
    if not isinstance(tree, dict):
        return mutate_text(rng, data, "yaml-syntax")
    what = mutate_data(rng, tree, rng.choice(kinds))
    return FRONT + _dump(tree) + FRONT + body, f"front matter {what}"


def _mutate_tree(rng: random.Random, ws: Workspace, kind: str) -> str:
    files = ws.files()
    rel = rng.choice(files)
    folder = rel.rsplit("/", 1)[0]
    if kind == "odd-file-name":
        name = rng.choice(["with space.md", "ünï.md", "UPPER.MD", "-dash.md", "a" * 200 + ".md"])
        ws.write(f"{folder}/{name}", ws.read(rel))
        return f"copied {rel} as {folder}/{name}"
    if kind == "non-utf8-file-name":
        raw_name = os.fsencode(folder) + b"/bad-\xff\xfe.md"
        ws.write(raw_name, ws.read(rel))
        return f"copied {rel} under a non-UTF-8 name"
    if kind == "stray-file":
        name = rng.choice(["notes.txt", ".hidden.yaml", "chapter.yml", "empty.md", "x.yaml"])
        ws.write(f"{folder}/{name}", rng.choice([b"", b"\x00\x01", b"title: x\n", b"---\n"]))
        return f"added {folder}/{name}"
    if kind == "missing-file":
        ws.remove(rel)
        return f"removed {rel}"
    if kind == "symlink":
        target = rng.choice(["/etc/hostname", "nowhere", ".", "../..", rel.rsplit("/", 1)[-1]])
        ws.symlink(rel, target)
        return f"{rel} -> {target}"
    if kind == "file-becomes-folder":
        ws.remove(rel)
        ws.mkdir(rel)
        return f"{rel} is now a folder"
    raise ValueError(kind)
