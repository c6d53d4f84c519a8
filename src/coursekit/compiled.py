"""What every process compiles the same way, compiled once and kept beside coursekit's bytecode.

A fresh `coursekit` process compiled the same things every time before its first line of work:
~270 methods that `dataclasses` writes as source text (a record's `__init__`, a frozen one's
`__setattr__` and `__delattr__`, pydantic's, annotated_types' and markdown-it's dataclasses'
`__init__`, `__eq__`, `__repr__`), 0.2-0.35 ms each, and ~670 regular expressions (click's,
markdown-it's, the rules'), ~50 ms together. At 100 chapters, on a busy machine, that was ~90 and
~50 ms of a ~650 ms prose edit. `install` keeps both in one file beside coursekit's bytecode
(`coursekit/__pycache__/`, wherever Python keeps it):

* `dataclasses` gets an `exec` of its own (a name of the module's own shadows the builtin for
  the one call it makes) that compiles each text once: a later process unmarshals the code
  object (~0.02 ms). The text is the whole key: it names every field, default and annotation
  the method reads, whose values come from the globals and locals `exec` is given, as before.
* `re`'s compiler (`re._compiler.compile`, which `re` calls for a pattern its own cache of
  512 does not hold) hands a pattern seen before straight to `_sre.compile` with the arguments
  it was compiled to the first time: the opcodes, flags and group tables the parser and code
  generator worked out, recorded as they went into `_sre.compile` (nothing of them is worked
  out here). The key is the pattern, its type and its flags, which are all they depend on for
  a given interpreter. `re.DEBUG` (it prints) and anything not a str or bytes pattern go to
  the compiler as before, and so does a recorded entry `_sre` refuses (it validates the code).

The file is trusted as the `.pyc` files beside it are: whoever can write there can change
coursekit's code anyway; nothing under a course or its project holds it. It is written only
where Python writes bytecode (not under PYTHONDONTWRITEBYTECODE), only by a process that
compiled something the file did not hold (a pattern compiling to a program it holds, under
another spelling, does not count: `PROGRAMS`), and atomically (a new file renamed over it); a
damaged, foreign or unreadable file is read as empty, as is one another interpreter wrote
(code objects and opcodes are its own).

Standard library only, with `framed` and `atomic` (the project's file format and writes).
"""

from __future__ import annotations

import atexit
import binascii
import builtins
import contextlib
import marshal
import os
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coursekit import framed

# The file is one framed record (`coursekit.framed`: checked by a CRC-32 before it is read) of
# both tables. The magic names the interpreter: code objects are marshalled in its own format,
# and the opcodes are its regular expression engine's. Bump the number when the shape changes.
MAGIC = b"coursekit-compiled\0" + b"4\0" + sys.version.encode() + b"\0"
METHODS = "methods"  # dataclasses' method texts -> their code objects, marshalled
PATTERNS = "patterns"  # (a str pattern?, pattern, flags) -> what `_sre.compile` was given
# what each kept pattern compiled to (`_program`) -> True. A pattern spelt differently in every
# process compiles to one program: markdown-it-py joins a set of characters into a class, in
# the set's order, which string hashing changes from process to process. Kept, each spelling
# was a new entry and the file was written again at the end of nearly every run that parsed
# Markdown (1,500 patterns held where a `check` uses ~670, 1.2 MB rewritten, ~3 MB more peak
# memory at 100 chapters); another spelling of a program the file holds is now not kept.
PROGRAMS = "programs"
TABLES = (METHODS, PATTERNS, PROGRAMS)
# A file that would hold more entries than this in one table (an editable install edited for
# months) is written again with only those the saving process used: a `check` uses ~270
# methods and ~670 patterns.
MAX_ENTRIES = 4096


def default_folder() -> str:
    """Where Python keeps coursekit's bytecode."""
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = sys.pycache_prefix
    if prefix:  # PYTHONPYCACHEPREFIX: a tree of its own mirroring the sources' folders
        return os.path.join(prefix, here.lstrip(os.sep))
    return os.path.join(here, "__pycache__")


def file_name() -> str:
    return f"compiled.{sys.implementation.cache_tag}.bin"


class Compiled:
    """The file's tables, read when first asked for, and what this process added to them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._tables: dict[str, dict[Any, Any]] | None = None
        self.new: dict[str, dict[Any, Any]] = {name: {} for name in TABLES}
        self.used: dict[str, set[Any]] = {METHODS: set(), PATTERNS: set()}

    def table(self, name: str) -> dict[Any, Any]:
        if self._tables is None:
            self._tables = read(self.path)
        return self._tables[name]

    def exec(
        self,
        source: Any,
        globals: dict[str, Any] | None = None,
        locals: Any = None,
        /,
    ) -> None:
        """`exec`, each source text compiled once across processes (what else it is given,
        a code object, goes to the builtin as it is)."""
        if type(source) is str:
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def code(self, text: str) -> types.CodeType:
        """The text compiled as the builtin `exec` compiles it (file name "<string>", none of
        the caller's `__future__` flags: dataclasses' module has none)."""
        methods = self.table(METHODS)
        self.used[METHODS].add(text)
        kept = methods.get(text)
        if kept is not None:
            try:
                code = marshal.loads(kept)
            except (EOFError, ValueError, TypeError):
                code = None
            if type(code) is types.CodeType:
                return code
        code = compile(text, "<string>", "exec", dont_inherit=True)
        methods[text] = self.new[METHODS][text] = marshal.dumps(code)
        return code

    def save(self) -> None:
        """Add what this process compiled to the file (with what another process added to it
        since it was read), unless Python writes no bytecode; any failure is only a miss."""
        if not any(self.new.values()) or sys.dont_write_bytecode:
            return
        from coursekit.atomic import atomic_write_chunks  # only writers pay for tempfile

        tables = read(self.path)
        tables[PROGRAMS] = {**tables[PROGRAMS], **self.new[PROGRAMS]}
        for name in (METHODS, PATTERNS):
            table = {**tables[name], **self.new[name]}
            if len(table) > MAX_ENTRIES:
                table = {key: value for key, value in table.items() if key in self.used[name]}
                if name == PATTERNS:  # the programs of those kept, and no others
                    tables[PROGRAMS] = {_program(entry): True for entry in table.values()}
            tables[name] = table
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            atomic_write_chunks(Path(self.path), framed.chunks(MAGIC, [tables]))
        except (OSError, ValueError):
            return
        self.new = {name: {} for name in TABLES}


def _program(entry: Any) -> int:
    """A pattern's `_sre.compile` arguments (its entry), named by a checksum of them: another
    spelling of a kept program only goes unkept when two programs share one (no harm)."""
    data = marshal.dumps(entry, 2)  # (version 2: no back-references, which hang on refcounts)
    return binascii.crc32(data) | len(data) << 32


def read(path: str) -> dict[str, dict[Any, Any]]:
    """The file's tables; empty ones for a missing, damaged or foreign file. An entry of the
    wrong shape is not looked for here: each is checked where it is used (a method's code
    must unmarshal to code, a pattern's arguments must be what `_sre.compile` takes), and
    one that is not is compiled again."""
    tables: dict[str, dict[Any, Any]] = {name: {} for name in TABLES}
    try:
        with open(path, "rb") as handle:
            found = framed.records(handle.read(), MAGIC)
    except OSError:
        return tables
    kept = found[0][0] if found is not None and len(found[0]) == 1 else None
    if type(kept) is dict:
        for name in tables:
            if type(kept.get(name)) is dict:
                tables[name] = kept[name]
    return tables


def _patterns_through(kept: Compiled) -> None:
    """`re._compiler.compile` through the kept patterns (see the module's docstring)."""
    import re

    compiler = getattr(re, "_compiler", None)
    real_compile: Callable[..., Any] | None = getattr(compiler, "compile", None)
    engine = getattr(compiler, "_sre", None)
    if compiler is None or real_compile is None or engine is None:
        return  # another interpreter's layout: patterns compile as before
    debug = re.DEBUG.value
    asked = threading.local()  # the key of the pattern this thread is compiling

    def recorded(
        pattern: Any, flags: int, code: list[int], groups: int, index: Any, names: Any
    ) -> Any:
        key = getattr(asked, "key", None)
        if key is not None:
            # (the opcodes are ints of a subclass that marshal does not write)
            entry = (int(flags), [int(c) for c in code], int(groups), dict(index), tuple(names))
            kept.table(PATTERNS)[key] = entry
            program, programs = _program(entry), kept.table(PROGRAMS)
            if program not in programs:  # (else only another spelling of a kept program)
                kept.new[PATTERNS][key] = entry
                programs[program] = kept.new[PROGRAMS][program] = True
        return engine.compile(pattern, flags, code, groups, index, names)

    # `_sre` as the compiler sees it: the engine itself but for `compile`, which records
    recording = types.SimpleNamespace(
        **{name: getattr(engine, name) for name in dir(engine) if not name.startswith("__")}
    )
    recording.compile = recorded

    def compile_pattern(pattern: Any, flags: int = 0) -> Any:
        kind = type(pattern)
        if (kind is str or kind is bytes) and type(flags) is int and not flags & debug:
            key = (kind is str, pattern, flags)
            kept.used[PATTERNS].add(key)
            entry = kept.table(PATTERNS).get(key)
            if entry is not None:
                with contextlib.suppress(TypeError, ValueError, RuntimeError, OverflowError):
                    return engine.compile(pattern, *entry)
            outer = getattr(asked, "key", None)  # (a pattern compiled while compiling one)
            asked.key = key
            try:
                return real_compile(pattern, flags)
            finally:
                asked.key = outer
        return real_compile(pattern, flags)

    compiler._sre = recording
    compiler.compile = compile_pattern


_installed: Compiled | None = None


def install(folder: str | None = None) -> Compiled:
    """Compile dataclasses' methods and regular expressions through the file in `folder` (by
    default where Python keeps coursekit's bytecode) for the rest of the process, saved when
    it exits. Once per process: a second call returns the first's."""
    global _installed
    if _installed is not None:
        return _installed
    import dataclasses

    kept = Compiled(os.path.join(folder or default_folder(), file_name()))
    dataclasses.exec = kept.exec  # type: ignore[attr-defined]
    _patterns_through(kept)
    atexit.register(kept.save)
    _installed = kept
    return kept
