"""Frames between the parent, the server and its workers (imported by ``_server.py``; stdlib only).

A frame is a 4-byte big-endian length, then UTF-8 JSON. Nothing is ever pickled.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any


def read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Any:
    head = read_exact(fd, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    body = read_exact(fd, size)
    if body is None:
        return None
    return json.loads(body)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def frame_bytes(obj: Any) -> bytes:
    """The frame for ``obj``; ValueError (or RecursionError) if it is not plain JSON."""
    body = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
    return struct.pack(">I", len(body)) + body


def write_frame(fd: int, obj: Any) -> None:
    write_all(fd, frame_bytes(obj))
