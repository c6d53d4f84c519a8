"""A package's public names imported when first asked for (PEP 562).

`coursekit.verify` and `coursekit.exec` offer their names at the top of the package, but a run
that needs one table of either (a status, a type) should not import the whole package: the
program runner, the sympy server's client. Each package's `__getattr__` is made here.

Standard library only: a leaf, importable from anywhere.
"""

from __future__ import annotations

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
