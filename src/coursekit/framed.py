"""Marshal records framed for a file: a magic, each record's length and bytes, a CRC-32 of them.

The cache's large files (the pack, the stat table: `cache_files`) and the compiled methods and
patterns kept beside coursekit's bytecode (`compiled`) are written this way. Each record is
its length (4 bytes, big-endian) and its marshal bytes, so a file is written record by record,
never held whole; the CRC-32 closes the file and is checked before any record is unmarshalled
(marshal does not guard against damaged input), so a truncated or damaged file, or another
format's, reads as nothing. Values are marshal's types only: what JSON holds, plus tuples,
bytes and code objects.

Standard library only: a leaf.
"""

from __future__ import annotations

import binascii
import gc
import marshal
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mmap

RECORD_VERSION = 4  # marshal's format (Python 3.4 and later)


def chunks(magic: bytes, records: Iterable[Any]) -> Iterator[bytes]:
    """The file's bytes, a record at a time (ValueError for a value marshal cannot hold)."""
    crc = 0
    yield magic
    for record in records:
        body = marshal.dumps(record, RECORD_VERSION)
        chunk = len(body).to_bytes(4, "big") + body
        crc = binascii.crc32(chunk, crc)
        yield chunk
    yield b"%08x" % crc


# marshal's type codes of an int ("i": 32 bits, "l": longer), with and without the flag that
# marks an object referred to again
_INT_CODES = frozenset(b"il") | {code | 0x80 for code in b"il"}


def first_int(data: bytes, magic: bytes) -> int | None:
    """The first record of the bytes `chunks` began with, when it is an int (`data`: the
    file's start, as much of it as holds that record), NOT checked: the CRC-32 closing the
    file covers all of it. Only for a guess that reading the whole file confirms (when the
    stat table says it was written); so only an int's few bytes are unmarshalled unchecked.
    None when `data` does not begin so."""
    start = len(magic)
    if data[:start] != magic or len(data) < start + 5:
        return None
    size = int.from_bytes(data[start : start + 4], "big")
    body = data[start + 4 : start + 4 + size]
    if len(body) != size or body[0] not in _INT_CODES:
        return None
    try:
        value = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return value if type(value) is int else None


def records(data: bytes | mmap.mmap, magic: bytes) -> tuple[list[Any], str] | None:
    """The records `chunks` framed after `magic`, and a name of what was read (its checksum and
    size: what another file written beside it names it by); None for anything else. `data`
    is bytes or a file mapped into memory: no view of it is left behind."""
    with memoryview(data) as view:
        return _records(view, magic)


def _records(view: memoryview, magic: bytes) -> tuple[list[Any], str] | None:
    start, end = len(magic), len(view) - 8
    if end < start or view[:start] != magic:
        return None
    closing = bytes(view[end:])
    if closing != b"%08x" % binascii.crc32(view[start:end]):
        return None
    found: list[Any] = []
    at = start
    # Unmarshalled values hold no cycle, so the collector has nothing to free among them, yet
    # the millions of lists and dicts of a 1,000-chapter pack set it off again and again
    # while they are built, and every collection of the older generations walked them again
    # afterwards: 0.24 s of collections in a 2.1 s prose edit, 0.08 s once the records are
    # frozen as read. It is paused while they are built; then what they are read into is
    # frozen (`gc.freeze`): it lives as long as the run, later collections skip it, and it
    # is still freed by reference counting. (A long-lived process unfreezes before each of
    # its own full collections: coursekit.daemon, coursekit.load.collecting.)
    paused = gc.isenabled()
    gc.disable()
    try:
        while at < end:
            size = int.from_bytes(view[at : at + 4], "big")
            at += 4
            if at + size > end:
                return None
            found.append(marshal.loads(view[at : at + size]))
            at += size
    except (EOFError, ValueError, TypeError, MemoryError):  # MemoryError: a length that lies
        return None
    finally:
        if paused:
            gc.enable()
    gc.freeze()
    return found, f"{closing.decode('ascii')}:{len(view)}"
