"""Importing late: a package's public names when first asked for (PEP 562), and the heavy
modules of a run with the garbage collector paused.

`coursekit.verify` and `coursekit.exec` offer their names at the top of the package, but a run
that needs one table of either (a status, a type) should not import the whole package: the
program runner, the sympy server's client. Each package's `__getattr__` is made here.

Standard library only: a leaf, importable from anywhere.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable, Mapping


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module `__getattr__` of `package`: each name of `homes` (name -> the module it
    lives in) is imported from its home when first asked for, and bound on the package.

    A name spelt like one of the package's submodules cannot be served this way: importing
    that submodule binds the module under the name before `__getattr__` is ever asked. Such a
    name is imported with the package instead (`coursekit.exec` does so for `compare`)."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def import_paused(*modules: str) -> None:
    """Import `modules` (those not imported yet) with the cyclic garbage collector paused, then
    freeze what the process holds (`gc.freeze`): later collections skip it.

    Importing makes classes, functions and module dicts that live as long as the process, and
    next to no garbage, yet every 700 of them set off a collection that walks the young ones
    again: a `check` after a one-lesson edit at 100 chapters ran ~160 collections in all
    (~40 ms, timed by `gc.callbacks`), ~80 (12-16 ms) with the command line, the engine and
    the reporters imported paused. Frozen objects are still freed by reference counting; a
    process that unfreezes (a load, the daemon) collects what it unfreezes as it would have."""
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return
    paused = gc.isenabled()
    gc.disable()
    try:
        for name in missing:
            importlib.import_module(name)
    finally:
        if paused:
            gc.freeze()
            gc.enable()
