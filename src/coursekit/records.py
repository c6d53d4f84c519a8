"""`record`: `dataclasses.dataclass`, with the methods that read every field written once.

On Python 3.11 a dataclass compiles each method it writes from source, on its own: `__init__`,
`__repr__`, `__eq__`, and for a frozen class `__hash__`, `__setattr__` and `__delattr__`, each
~0.1-0.2 ms. A `check` defines ~100 coursekit classes, so every fresh process spent ~0.11 s
of CPU compiling their methods (~0.065 s as records, on the same machine). A record has
dataclass write only what must be
the class's own (`__init__`, and a frozen class's guards against assignment) and shares one
`__eq__`, `__hash__` and `__repr__` among all records, which read the class's fields: they
compare, hash and print what dataclass's would (the fields it would use, in its order and
format), and a method the class body defines itself is kept, as dataclass keeps it.
(Python 3.13 writes a class's methods in one compilation; this is then a smaller saving.)
A record with no docstring gets its class name for one: dataclass would write one from
`inspect.signature` of the class, another ~0.1 ms each (42 of a `check`'s records had none).

mypy sees `dataclasses.dataclass` itself: a record is typed, and checked, as one.

Standard library only: a leaf.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

__all__ = ["record"]

Values = Callable[[Any], tuple[Any, ...]]

# A record class -> what its instances are compared by, hashed by, shown with (worked out
# at first use: the fields of a class are settled once dataclass has made it).
_COMPARED: dict[type, Values] = {}
_HASHED: dict[type, Values] = {}
_SHOWN: dict[type, tuple[str, ...]] = {}


def _getter(names: list[str]) -> Values:
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _compared(cls: type) -> Values:
    values = _COMPARED.get(cls)
    if values is None:
        names = [f.name for f in dataclasses.fields(cls) if f.compare]
        values = _COMPARED[cls] = _getter(names)
    return values


def _hashed(cls: type) -> Values:
    values = _HASHED.get(cls)
    if values is None:
        # dataclass's rule: `hash=None` follows `compare`
        fields = dataclasses.fields(cls)
        names = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        values = _HASHED[cls] = _getter(names)
    return values


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        values = _compared(self.__class__)
        return values(self) == values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_hashed(self.__class__)(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    cls = self.__class__
    names = _SHOWN.get(cls)
    if names is None:
        names = _SHOWN[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.repr)
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
    return f"{cls.__qualname__}({shown})"


def _record(
    cls: type | None = None, /, *, frozen: bool = False, slots: bool = False, order: bool = False
) -> Any:
    def make(cls: type) -> type:
        if not cls.__doc__:  # dataclass would write one from `inspect.signature`: ~0.1 ms
            cls.__doc__ = cls.__name__
        if order:  # the ordering methods dataclass writes go with its own `__eq__`
            return dataclasses.dataclass(cls, frozen=frozen, slots=slots, order=True)
        body = cls.__dict__  # (before `slots` makes a new class of it)
        own_eq, own_repr = "__eq__" in body, "__repr__" in body
        own_hash = body.get("__hash__", None) is not None or (
            "__hash__" in body and not own_eq  # `__hash__ = None` written in the body
        )
        made: type = dataclasses.dataclass(cls, frozen=frozen, slots=slots, eq=False, repr=False)
        if not own_repr:
            made.__repr__ = _repr  # type: ignore[assignment]
        if not own_eq:
            made.__eq__ = _eq  # type: ignore[assignment]
        if not own_hash:  # as dataclass does for eq=True: hashable when frozen
            made.__hash__ = _hash if frozen else None  # type: ignore[assignment]
        return made

    return make if cls is None else make(cls)


if TYPE_CHECKING:
    from dataclasses import dataclass as record
else:
    record = _record
