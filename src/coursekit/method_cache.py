"""Compiled dataclass methods, kept between processes beside coursekit's own bytecode.

`dataclasses` writes each method it adds to a class (`__init__`; a frozen class's `__setattr__`
and `__delattr__`; `__eq__`, `__repr__` and others for a plain dataclass) as source text and
compiles it with `exec`: 0.2-0.35 ms a method on Python 3.11, and a `check` makes ~270 of them
(coursekit's records and pydantic's, annotated_types' and markdown-it's dataclasses), in every
process: ~90 ms of a prose edit at 100 chapters on a busy machine, a seventh of it. `install`
gives the `dataclasses` module an `exec` of its own that compiles each text once: the code
object is kept, by its text, in one file beside coursekit's bytecode (`coursekit/__pycache__/`,
wherever Python keeps it), and a later process unmarshals it (~0.02 ms) rather than compiling
the same text again. The text is the whole key: it names every field, default and annotation
the method reads (their values come from the globals and locals `exec` is given, as before),
so equal texts compile to equal code.

The file is trusted as the `.pyc` files beside it are: whoever can write there can change
coursekit's code anyway; nothing under a course or its project holds it. It is written only
where Python writes bytecode (not under PYTHONDONTWRITEBYTECODE), only by a process that
compiled a text the file did not hold, and atomically (a new file renamed over it); a damaged,
foreign or unreadable file is read as empty. It names the interpreter it was written by, whose
marshal format its code objects are in: another interpreter reads it as empty.

Standard library only: a leaf.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import marshal
import os
import sys
import types
from typing import Any

# Names the interpreter: code objects are marshalled in its own format. Bump the number when
# the file's shape changes.
MAGIC = b"coursekit-dataclass-methods\0" + b"1\0" + sys.version.encode() + b"\0"
# A file that would hold more texts than this (an editable install edited for months) is
# written again with only those the saving process used: a `check` uses ~270.
MAX_TEXTS = 4096


def default_folder() -> str:
    """Where Python keeps coursekit's bytecode."""
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = sys.pycache_prefix
    if prefix:  # PYTHONPYCACHEPREFIX: a tree of its own mirroring the sources' folders
        return os.path.join(prefix, here.lstrip(os.sep))
    return os.path.join(here, "__pycache__")


def file_name() -> str:
    return f"dataclass-methods.{sys.implementation.cache_tag}.bin"


class MethodCache:
    """The compiled texts `exec` was given, read from `path` when first asked for."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._codes: dict[str, bytes] | None = None  # text -> its code object, marshalled
        self.new: dict[str, bytes] = {}  # what this process compiled that the file lacked
        self.used: set[str] = set()  # every text this process was given

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
        codes = self._read() if self._codes is None else self._codes
        self.used.add(text)
        kept = codes.get(text)
        if kept is not None:
            try:
                code = marshal.loads(kept)
            except (EOFError, ValueError, TypeError):
                code = None
            if type(code) is types.CodeType:
                return code
        code = compile(text, "<string>", "exec", dont_inherit=True)
        codes[text] = self.new[text] = marshal.dumps(code)
        return code

    def _read(self) -> dict[str, bytes]:
        self._codes = read(self.path)
        return self._codes

    def save(self) -> None:
        """Add what this process compiled to the file (with what another process added to it
        since it was read), unless Python writes no bytecode; any failure is only a miss."""
        if not self.new or sys.dont_write_bytecode:
            return
        codes = {**read(self.path), **self.new}
        if len(codes) > MAX_TEXTS:
            codes = {text: code for text, code in codes.items() if text in self.used}
        body = MAGIC + marshal.dumps(codes)
        folder = os.path.dirname(self.path)
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(folder, exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(body)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return
        self.new = {}


def read(path: str) -> dict[str, bytes]:
    """The texts and code objects the file holds; {} for a missing, damaged or foreign one."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    if not data.startswith(MAGIC):
        return {}
    try:
        codes = marshal.loads(memoryview(data)[len(MAGIC) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if type(codes) is not dict:
        return {}
    return {k: v for k, v in codes.items() if type(k) is str and type(v) is bytes}


_installed: MethodCache | None = None


def install(folder: str | None = None) -> MethodCache:
    """Compile dataclasses' methods through a `MethodCache` in `folder` (by default where
    Python keeps coursekit's bytecode) for the rest of the process, saved when it exits.
    Once per process: a second call returns the first's."""
    global _installed
    if _installed is not None:
        return _installed
    import dataclasses

    cache = MethodCache(os.path.join(folder or default_folder(), file_name()))
    # A name of the module's own shadows the builtin for the one call it makes
    # (`dataclasses._create_fn` on 3.11 and 3.12, `_FuncBuilder` on 3.13).
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    atexit.register(cache.save)
    _installed = cache
    return cache
