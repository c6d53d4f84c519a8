"""One file holding every store entry a run used: the next run reads it once, not entry by entry.

A run at 100 chapters looks up ~1,700 entries (parsed YAML documents, sympy verdicts, program
outcomes, per-chapter rule results); one `open` and `json.loads` each cost more than the rules
that use them. `PackedStore` serves a lookup from the pack the last run left
(`.coursekit_cache/v1/pack.json`), falls back to the `DiskStore` entry by entry, and at the
end of the run writes the pack again with exactly the entries this run read or wrote, so it
never grows beyond one run's worth. The pack carries the store's salt (the environment):
a pack written under other versions is ignored whole. Entries still go to the `DiskStore`
too, so losing the pack (a failed write, another run replacing it) only costs speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coursekit.cache import DiskStore
from coursekit.cache_files import FORMAT, _prepare, _read_json, _write_json

PACK = "pack.json"


class PackedStore:
    """A `ResultStore`: the last run's pack in front of a `DiskStore`."""

    def __init__(self, below: DiskStore) -> None:
        self.below = below
        self.declined = below.declined
        self._pack: dict[str, Any] | None = None
        self.used: dict[str, dict[str, Any]] = {}

    @property
    def path(self) -> Path:
        return self.below.root / FORMAT / PACK

    def _entries(self) -> dict[str, Any]:
        if self._pack is None:
            pack = _read_json(self.path)
            ok = isinstance(pack, dict) and pack.get("salt") == self.below.salt
            entries = pack.get("entries") if ok and isinstance(pack, dict) else None
            self._pack = entries if isinstance(entries, dict) else {}
        return self._pack

    def get(self, namespace: str, key: str) -> Any | None:
        kept = self._entries().get(namespace)
        value = kept.get(key) if isinstance(kept, dict) else None
        if value is None:
            value = self.below.get(namespace, key)
        if value is not None:
            self.used.setdefault(namespace, {})[key] = value
        return value

    def put(self, namespace: str, key: str, value: Any) -> None:
        self.used.setdefault(namespace, {})[key] = value
        self.below.put(namespace, key, value)

    def decline(self, namespace: str, key: str, why: str) -> None:
        self.used.get(namespace, {}).pop(key, None)
        kept = self._entries().get(namespace)
        if isinstance(kept, dict):
            kept.pop(key, None)
        self.below.decline(namespace, key, why)

    def save(self) -> bool:
        """Write the pack: the entries this run used (False when it could not be written)."""
        if not self.below.writable:
            return False
        try:
            _prepare(self.below.root)
        except OSError:
            return False
        pack = {"salt": self.below.salt, "entries": self.used}
        return _write_json(self.path, pack, spread=3)  # entry by entry: see _chunks
