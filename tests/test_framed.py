"""Marshal records framed for a file (`coursekit.framed`): the one unchecked read, the stat
table's first record, which decides only whether a child is worth its fork."""

from __future__ import annotations

import marshal

import pytest

from coursekit import framed

MAGIC = b"coursekit-test\0" + b"1\0"


def _file(*records: object) -> bytes:
    return b"".join(framed.chunks(MAGIC, records))


@pytest.mark.parametrize("value", [0, 7, -3, 2**31, 1_796_414_493_972_664_994, 2**62])
def test_the_first_record_is_read_when_it_is_an_int(value: int) -> None:
    data = _file(value, {"rows": [1, 2, 3]})
    assert framed.first_int(data[: len(MAGIC) + 4 + 16], MAGIC) == value
    assert framed.records(data, MAGIC) is not None  # (the whole, checked, agrees)


@pytest.mark.parametrize(
    "data",
    [
        _file("written", 1),  # a first record that is not an int
        _file(compile("x = 1", "<x>", "exec")),  # nor code: never unmarshalled unchecked
        _file(2.5),
        _file(True),
        b"coursekit-other\0" + b"1\0" + _file(5)[len(MAGIC) :],  # another file's magic
        _file(2**62)[: len(MAGIC) + 6],  # cut short within the record
        MAGIC + b"\0\0\0",  # cut short within its length
        b"",
    ],
    ids=["str", "code", "float", "bool", "magic", "cut", "length", "empty"],
)
def test_anything_else_is_none(data: bytes) -> None:
    assert framed.first_int(data[: len(MAGIC) + 4 + 16], MAGIC) is None


def test_only_an_ints_type_codes_are_unmarshalled(monkeypatch: pytest.MonkeyPatch) -> None:
    unmarshalled: list[bytes] = []
    real = marshal.loads

    def loads(data: bytes) -> object:
        unmarshalled.append(bytes(data))
        return real(data)

    monkeypatch.setattr(marshal, "loads", loads)
    assert framed.first_int(_file(["a", "list"]), MAGIC) is None
    assert unmarshalled == []
    assert framed.first_int(_file(12), MAGIC) == 12
    assert len(unmarshalled) == 1
