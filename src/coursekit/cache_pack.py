"""One file holding every store entry a run used: the next run reads it once, not entry by entry.

A run at 100 chapters looks up ~1,700 entries (parsed YAML documents, sympy verdicts, program
outcomes, per-chapter rule results); one `open` and `json.loads` each cost more than the rules
that use them. `PackedStore` serves a lookup from the pack its environment's last run left
(`pack.bin` in the store's generation, `cache_sweep`), falls back to the `DiskStore` entry by
entry, and at the end of the run keeps exactly the entries this run read or wrote for the next
(the pack again, or a delta of it, below), so what the next run reads never grows beyond one
run's worth (the pack holds at most an eighth more, or 256 entries). The pack carries the
salt (the environment): one of other versions is ignored whole. Entries still go to the
`DiskStore` too, so losing the pack (a failed write) only costs speed.

The pack is a stream of marshal records (`cache_files.write_records`; at 1,000 chapters read
in ~0.06 s, against ~0.3 s as JSON): the salt, then (namespace, {key: value}) for up to
`CHUNK` entries of a namespace each (a record per entry looped ~10,800 times, ~20 ms of a
read). A value this run computed is kept as the `DiskStore`'s JSON would give it back (tuples
as lists, keys as strings), so a run reads from the pack exactly what it would read from the
entry. A parsed document's value (`LAZY`) is its own marshal bytes, unpacked when the run
first reads it: most runs carry most of them to the next pack unread (`carry`).

A run whose entries differ from the pack's in few places (an edit: a lesson's text, its parse,
its chapter's results) writes only those differences, to `pack-delta.bin` beside the pack, not
the pack again (41 MB at 1,000 chapters for one edited lesson): the entries it added or changed,
and the keys of those it no longer used. The delta names the pack it amends by the pack's
checksum and size, and is read only over that pack; it always holds every difference from that
pack, so a run reads the pack and at most one delta, and once the differences pass an eighth of
the entries the pack is written whole again and the delta removed. A lost or damaged delta
costs what a lost pack costs: entries kept by content are found again, or computed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import marshal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from coursekit.cache_files import (
    _ENCODER,
    _prepare,
    read_records,
    read_records_named,
    write_records,
)
from coursekit.cache_store import DiskStore
from coursekit.framed import RECORD_VERSION
from coursekit.store import ENTRY_BY_ENTRY

PACK = "pack.bin"
# What earlier versions wrote in the cache's versioned folder (JSON; one pack for all): removed.
LEGACY = ("pack.json", "files.json", "pack.bin", "pack-delta.bin")
MAGIC = b"coursekit-pack\0" + b"3\0"  # the last number: bump when the records' shape changes
CHUNK = 128  # entries to a record: written one record at a time, never the whole pack held
TEXTS = "texts"  # course files' texts by content hash (`cache_seen`): kept in the pack alone
DELTA = "pack-delta.bin"
DELTA_MAGIC = b"coursekit-pack-delta\0" + b"2\0"
# Values held as their own marshal bytes, unmarshalled when first read (`peek`): a prose edit at
# 1,000 chapters reads ~100 of ~1,100 parses and carries the rest unread (`carry`): 30-100 ms.
LAZY = frozenset({"yaml"})
# A run writes a delta while it differs from the pack in at most this many, or 1/DELTA_SHARE.
DELTA_MIN = 256
DELTA_SHARE = 8
_MISSING = object()


class PackedStore:
    """A `ResultStore`: the last run's pack in front of a `DiskStore`."""

    def __init__(self, below: DiskStore) -> None:
        self.below = below
        self.declined = below.declined
        self._pack: dict[str, Any] | None = None
        self._base: dict[str, dict[str, Any]] = {}  # the pack file's own entries, as read
        self._base_name: str | None = None  # its checksum and size: what a delta names it by
        self.used: dict[str, dict[str, Any]] = {}
        self.computed: set[tuple[str, str]] = set()  # put by this run: kept as JSON holds it
        # a `LAZY` entry read this run -> (its value, its bytes as read): written back as read
        # (marshal's bytes for an equal value may differ, which would make it a change)
        self._unpacked: dict[tuple[str, str], tuple[Any, bytes]] = {}

    @property
    def path(self) -> Path:
        """In the environment's generation of the store (`cache_sweep`): environments used in
        turn each keep their own (one for all cost ~1.9 s an edit at 1,000 chapters)."""
        return self.below.generation / PACK

    @property
    def delta_path(self) -> Path:
        return self.below.generation / DELTA

    def read_ahead(self) -> None:
        """Read the last run's pack now, rather than at the first lookup."""
        self._entries()

    def _entries(self) -> dict[str, Any]:
        if self._pack is None:
            self._pack = self._read()
        return self._pack

    def _read(self) -> dict[str, Any]:
        """The last run's entries: the pack, amended by the delta that names it."""
        read = read_records_named(self.path, MAGIC)
        if read is None:
            return {}
        base = _entries(read[0], self.below.salt)
        if not base:
            return {}
        self._base, self._base_name = base, read[1]
        delta = read_records(self.delta_path, DELTA_MAGIC) or []
        named = delta[:1] == [(self.below.salt, read[1])]  # it amends this very pack
        return _amended(base, delta[1:] if named else [])

    def get(self, namespace: str, key: str) -> Any | None:
        if namespace in ENTRY_BY_ENTRY:
            return self.below.get(namespace, key)
        value = self.packed(namespace, key)
        if value is None:
            value = self.below.get(namespace, key)
            if value is not None:
                self.pack(namespace, key, value)
        return value

    def put(self, namespace: str, key: str, value: Any) -> None:
        if namespace in ENTRY_BY_ENTRY:
            self.below.put(namespace, key, value)
            return
        self.pack(namespace, key, value)
        self.computed.add((namespace, key))
        self.below.put(namespace, key, value)

    def packed(self, namespace: str, key: str) -> Any | None:
        """What the last pack holds under the key (kept for the next), with no `DiskStore`
        entry looked for: `get` without its fallback, for what is kept in the pack alone."""
        value = self.peek(namespace, key)
        if value is not None:
            self.pack(namespace, key, value)
        return value

    def peek(self, namespace: str, key: str) -> Any | None:
        """What the last pack holds under the key, not kept for the next (a text as it was
        before an edit, say, which this run does not use)."""
        kept = self._entries().get(namespace)
        if not isinstance(kept, dict):
            return None
        value = kept.get(key)
        if type(value) is bytes and namespace in LAZY:
            try:
                unpacked = marshal.loads(value)  # (its bytes passed the pack's checksum)
            except (EOFError, ValueError, TypeError):
                return None
            self._unpacked[(namespace, key)] = (unpacked, value)
            kept[key] = value = unpacked
        return value

    def carry(self, namespace: str, key: str) -> bool:
        """Keep the last pack's entry for the next as it is, without unpacking it (a `LAZY`
        one's bytes); False when the pack holds none."""
        kept = self._entries().get(namespace)
        value = kept.get(key) if isinstance(kept, dict) else None
        if value is None:
            return False
        self.pack(namespace, key, value)
        return True

    def pack(self, namespace: str, key: str, value: Any) -> None:
        """Keep a marshal value in the next pack (and, said alone, nowhere else: what is only
        worth keeping whole, a run reading all of it or none, and costs only speed to lose)."""
        self.used.setdefault(namespace, {})[key] = value

    def forget(self, namespace: str) -> None:
        """Let go of `namespace`'s entries in memory (the daemon's validated parses), not on disk."""
        for held in (self._entries(), self._base, self.used):
            held.pop(namespace, None)
        self.computed = {(n, k) for n, k in self.computed if n != namespace}
        self._unpacked = {(n, k): v for (n, k), v in self._unpacked.items() if n != namespace}

    def decline(self, namespace: str, key: str, why: str) -> None:
        self.used.get(namespace, {}).pop(key, None)
        self.computed.discard((namespace, key))
        self._unpacked.pop((namespace, key), None)
        kept = self._entries().get(namespace)
        if isinstance(kept, dict):
            kept.pop(key, None)
        self.below.decline(namespace, key, why)

    def save(self) -> bool:
        """Keep the entries this run used for the next: as a delta of the pack when they differ
        from it in few places, else as the pack (False when nothing could be written)."""
        if not self.below.writable:
            return False
        try:
            folder = _prepare(self.below.root)
        except OSError:
            return False
        self.below.claim()
        changes = self._changes()
        if changes is not None:
            header = (self.below.salt, self._base_name)
            if write_records(self.delta_path, DELTA_MAGIC, [header, *changes]):
                return True
        for name in LEGACY:
            with contextlib.suppress(OSError):
                (folder / name).unlink(missing_ok=True)
        # Streamed, `CHUNK` at a time: all converted at once peaked ~60 MB higher (1,000 chapters)
        records = itertools.chain([self.below.salt], _chunks(self._records()))
        if not write_records(self.path, MAGIC, records):
            return False
        with contextlib.suppress(OSError):
            self.delta_path.unlink(missing_ok=True)  # it amends the pack just replaced
        return True

    def _changes(self) -> list[tuple[Any, ...]] | None:
        """How the entries used differ from the pack read (added or changed entries, then the
        keys of those gone), or None when there is no pack to amend or they differ too much."""
        if self._base_name is None:
            return None
        limit = max(DELTA_MIN, sum(map(len, self.used.values())) // DELTA_SHARE)
        changes: list[tuple[Any, ...]] = []
        kept: set[tuple[str, str]] = set()
        for namespace, key, value in self._records():
            kept.add((namespace, key))
            old = self._base.get(namespace, {}).get(key, _MISSING)
            if old is _MISSING or (old is not value and old != value):
                changes.append((namespace, key, value))
                if len(changes) > limit:
                    return None
        for namespace, entries in self._base.items():
            changes += [(namespace, key) for key in entries if (namespace, key) not in kept]
            if len(changes) > limit:
                return None
        return changes

    def _records(self) -> Iterator[tuple[str, str, Any]]:
        for namespace, entries in self.used.items():
            lazy = namespace in LAZY
            for key, value in entries.items():
                if (namespace, key) in self.computed:
                    try:
                        value = json.loads(_ENCODER.encode(value))  # as DiskStore writes it
                    except (TypeError, ValueError, RecursionError):
                        continue  # what the DiskStore cannot keep, the pack does not either
                if lazy and type(value) is not bytes:
                    read = self._unpacked.get((namespace, key))
                    if read is not None and read[0] is value:
                        value = read[1]
                    else:
                        value = marshal.dumps(value, RECORD_VERSION)
                yield namespace, key, value


def _amended(base: dict[str, dict[str, Any]], changes: list[Any]) -> dict[str, Any]:
    """A copy of the pack's entries with a delta's changes applied (the copy, so that the
    pack's own stay as read to compare against); the pack's alone when a change has no known
    shape, which makes the whole delta unusable."""
    if not all(
        isinstance(change, tuple)
        and len(change) in (2, 3)
        and all(isinstance(part, str) for part in change[:2])
        and (len(change) == 2 or change[0] not in LAZY or type(change[2]) is bytes)
        for change in changes
    ):
        changes = []
    entries = {namespace: dict(kept) for namespace, kept in base.items()}
    for change in changes:
        if len(change) == 3:
            entries.setdefault(change[0], {})[change[1]] = change[2]
        else:
            entries.get(change[0], {}).pop(change[1], None)
    return entries


def _chunks(records: Iterator[tuple[str, str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The records as the pack holds them: (namespace, {key: value}), `CHUNK` at most each."""
    for namespace, run in itertools.groupby(records, key=lambda record: record[0]):
        while chunk := {key: value for _, key, value in itertools.islice(run, CHUNK)}:
            yield namespace, chunk


def _entries(records: list[Any] | None, salt: str) -> dict[str, Any]:
    """namespace -> key -> value, from a pack's records written under `salt` ({} otherwise)."""
    if not records or records[0] != salt:
        return {}
    entries: dict[str, dict[str, Any]] = {}
    for record in records[1:]:
        if not (isinstance(record, tuple) and len(record) == 2 and type(record[1]) is dict):
            return {}
        namespace, chunk = record
        if not (isinstance(namespace, str) and all(type(key) is str for key in chunk)):
            return {}
        if namespace in LAZY and not all(type(value) is bytes for value in chunk.values()):
            return {}
        entries.setdefault(namespace, {}).update(chunk)
    return entries
