"""Files of framed records (the pack, the stat table) read back: a large one is mapped into
memory rather than read (#20: reading copied the 47 MB pack of a 1,000-chapter course, ~45 ms of
each edit's run), and either way a damaged file is a miss, never a crash.
"""

from __future__ import annotations

import binascii
import marshal
from pathlib import Path
from typing import Any

import pytest

from coursekit import cache_files
from coursekit.cache_files import read_records_named, write_records

MAGIC = b"coursekit-test\0" + b"1\0"
RECORDS: list[Any] = [
    "salt",
    ("texts", "a" * 64, "# A lesson\n\nIts prose, é and all.\n" * 200),
    ("rules", "I.1", {"": "key", "CK201": ["k", [["p", 1, 2, "CK201", "m"]]]}),
    ("yaml", "b" * 64, marshal.dumps({"id": "I.1", "items": [1, 2.5, None, True]})),
]


@pytest.fixture(params=["mapped", "read"])
def how(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every file mapped (from 0 bytes), or every file read."""
    monkeypatch.setattr(cache_files, "MAP_FROM", 0 if request.param == "mapped" else 1 << 40)
    return str(request.param)


def _written(tmp_path: Path) -> Path:
    path = tmp_path / ".coursekit_cache" / "v1" / "pack.bin"
    assert write_records(path, MAGIC, RECORDS)
    return path


def test_the_records_read_back_whole_and_named_by_checksum_and_size(
    tmp_path: Path, how: str
) -> None:
    path = _written(tmp_path)
    read = read_records_named(path, MAGIC)
    assert read is not None
    records, name = read
    assert records == RECORDS  # (marshal keeps tuples and bytes as they were)
    checksum, size = name.split(":")
    assert int(size) == path.stat().st_size and checksum == path.read_bytes()[-8:].decode()


def test_mapped_and_read_give_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _written(tmp_path)
    monkeypatch.setattr(cache_files, "MAP_FROM", 0)
    mapped = read_records_named(path, MAGIC)
    monkeypatch.setattr(cache_files, "MAP_FROM", 1 << 40)
    assert mapped is not None and mapped == read_records_named(path, MAGIC)


def _damaged(data: bytes, damage: str) -> bytes:
    if damage == "cut short":
        return data[: len(data) // 2]
    if damage == "a byte changed":
        middle = len(data) // 2
        return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]
    if damage == "emptied":
        return b""
    if damage == "another format's":
        return b"coursekit-test\0" + b"2\0" + data[len(MAGIC) :]
    raise AssertionError(damage)


@pytest.mark.parametrize("damage", ["cut short", "a byte changed", "emptied", "another format's"])
def test_a_damaged_file_reads_as_nothing(tmp_path: Path, how: str, damage: str) -> None:
    path = _written(tmp_path)
    path.write_bytes(_damaged(path.read_bytes(), damage))
    assert read_records_named(path, MAGIC) is None


def test_a_record_marshal_refuses_reads_as_nothing(tmp_path: Path, how: str) -> None:
    """A file whose checksum holds over a record that is not marshal's: the read stops
    inside the records, and the mapping is still let go of (no view of it is left)."""
    path = tmp_path / ".coursekit_cache" / "v1" / "pack.bin"
    body = b"\xff\xfe not marshal"
    chunk = len(body).to_bytes(4, "big") + body
    data = MAGIC + chunk + b"%08x" % binascii.crc32(chunk)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    assert read_records_named(path, MAGIC) is None
    path.unlink()  # (nothing holds the file)


def test_a_file_reached_through_a_link_is_not_read(tmp_path: Path, how: str) -> None:
    path = _written(tmp_path)
    link = path.with_name("link.bin")
    link.symlink_to(path)
    assert read_records_named(link, MAGIC) is None
