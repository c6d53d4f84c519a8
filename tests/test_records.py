"""coursekit.records: a record behaves as the dataclass it replaces, with shared methods."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from coursekit.records import record

Make = Callable[..., Any]
OPTIONS = [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}]


def point(make: Make, **options: Any) -> Any:
    """The same class body, made by `make` (dataclass or record)."""

    @make(**options)
    class Point:
        x: int
        y: str = "y"
        seconds: float = dataclasses.field(default=0.0, compare=False)
        cache: dict[str, int] = dataclasses.field(default_factory=dict, repr=False, compare=False)
        shared: ClassVar[int] = 3

    return Point


def pair(**options: Any) -> tuple[Any, Any]:
    return point(dataclasses.dataclass, **options), point(record, **options)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_a_record_compares_hashes_and_prints_as_its_dataclass(options: dict[str, Any]) -> None:
    made_by_dataclass, made_as_record = pair(**options)
    values = [(1, "a", 0.5), (1, "a", 9.0), (2, "a", 0.5), (1, "b", 0.5)]
    for cls in (made_by_dataclass, made_as_record):
        cls.__qualname__ = "Point"  # (both are local classes of `point`)
    for left in values:
        for right in values:
            expected = made_by_dataclass(*left) == made_by_dataclass(*right)
            assert (made_as_record(*left) == made_as_record(*right)) is expected
        a, b = made_by_dataclass(*left), made_as_record(*left)
        assert repr(a) == repr(b)
        assert (a.__hash__ is None) is (b.__hash__ is None)
        assert made_as_record(*left) != made_by_dataclass(*left)  # another class
        assert made_as_record(*left) != left
    if options.get("frozen"):
        # equal records hash alike, whatever a field left out of the comparison holds
        assert hash(made_as_record(1, "a", 0.5)) == hash(made_as_record(1, "a", 9.0))
        assert len({made_as_record(*v) for v in values}) == 3
        with pytest.raises(dataclasses.FrozenInstanceError):
            made_as_record(1).x = 2
    else:
        with pytest.raises(TypeError, match="unhashable"):
            hash(made_as_record(1))


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_a_record_is_a_dataclass_to_the_standard_library(options: dict[str, Any]) -> None:
    _, made_as_record = pair(**options)
    made = made_as_record(1, "a", 0.5)
    assert [f.name for f in dataclasses.fields(made)] == ["x", "y", "seconds", "cache"]
    assert dataclasses.replace(made, x=5) == made_as_record(5, "a")
    assert dataclasses.asdict(made) == {"x": 1, "y": "a", "seconds": 0.5, "cache": {}}
    assert made_as_record.__match_args__ == ("x", "y", "seconds", "cache")


def test_what_the_class_body_defines_is_kept() -> None:
    @record(frozen=True)
    class Named:
        name: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __hash__(self) -> int:
            return hash(self.name.lower())

    assert Named("A") == Named("a")
    assert repr(Named("A")) == "<A>"
    assert len({Named("A"), Named("a")}) == 1

    @record
    class Unhashable:
        value: int
        __hash__ = None  # type: ignore[assignment]

    @record
    class Hashable:
        value: int

        def __hash__(self) -> int:
            return self.value

    assert Unhashable.__hash__ is None
    assert hash(Hashable(4)) == 4  # as dataclass does: a __hash__ of the body is kept


def test_a_subclass_compares_by_all_of_its_fields() -> None:
    @record(frozen=True)
    class Base:
        a: int

    @record(frozen=True)
    class Child(Base):
        b: int = 0

    assert Child(1, 2) == Child(1, 2)
    assert Child(1, 2) != Child(1, 3)
    assert Child(1) != Base(1)
    assert repr(Child(1, 2)).endswith("Child(a=1, b=2)")


def test_records_share_their_methods_where_a_dataclass_writes_its_own() -> None:
    first, second = point(record, frozen=True), point(record, frozen=True)
    for name in ("__eq__", "__hash__", "__repr__"):
        assert getattr(first, name) is getattr(second, name)
    one, other = (
        point(dataclasses.dataclass, frozen=True),
        point(dataclasses.dataclass, frozen=True),
    )
    assert one.__eq__ is not other.__eq__


def test_an_ordered_record_orders_and_a_frozen_slotted_one_pickles() -> None:
    @record(frozen=True, slots=True, order=True)
    class Version:
        major: int
        minor: int

    assert sorted([Version(1, 2), Version(0, 9), Version(1, 0)]) == [
        Version(0, 9),
        Version(1, 0),
        Version(1, 2),
    ]
    made = point(record, frozen=True, slots=True)
    globals()["Point"] = made  # (pickle finds a class by its module and name)
    made.__qualname__ = "Point"
    try:
        kept = made(1, "a", 0.5)
        assert pickle.loads(pickle.dumps(kept)) == kept
    finally:
        del globals()["Point"]


def test_a_record_that_holds_itself_prints_without_recursing() -> None:
    @record
    class Box:
        inside: Any = None

    box = Box()
    box.inside = box
    assert repr(box).endswith("Box(inside=...)")


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_a_record_without_a_docstring_is_made_without_inspecting_its_signature(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # dataclass writes a missing docstring from `inspect.signature` of the new class: ~0.1 ms
    # a class, and 42 of the records a `check` makes had none
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("inspect.signature called while making a record")

    monkeypatch.setattr("inspect.signature", refuse)

    @record(**options)
    class Undocumented:
        x: int
        y: str = "y"

    assert Undocumented(1) == Undocumented(1, "y")
    assert Undocumented.__doc__ == "Undocumented"

    @record(**options)
    class Documented:
        """Says what it is."""

        x: int

    assert Documented.__doc__ == "Says what it is."
