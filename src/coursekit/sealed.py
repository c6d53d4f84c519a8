"""A marshal value sealed for a file: a magic, a CRC-32 of the rest, then the marshal bytes.

The warm path's record (`coursekit.warm`) and the course's most recently changed paths
(`coursekit.warm_recent`) are kept this way; anything else (another format, a cut or damaged
file) unseals to None, so neither seals None itself. Standard library only (binascii,
marshal): the warm path imports it.
"""

from __future__ import annotations

import binascii
import marshal

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing itself is ~5 ms the warm path does not pay)
    from typing import Any


def seal(magic: bytes, value: Any) -> bytes:
    body = marshal.dumps(value)
    return magic + b"%08x" % binascii.crc32(body) + body


def unseal(magic: bytes, data: bytes) -> Any:
    """What `seal(magic, ...)` sealed in `data`, or None for anything else."""
    head = len(magic) + 8
    if not data.startswith(magic) or len(data) < head:
        return None
    body = memoryview(data)[head:]  # not a copy: a warm record is ~5 MB at 1,000 chapters
    if data[len(magic) : head] != b"%08x" % binascii.crc32(body):
        return None
    try:
        return marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
