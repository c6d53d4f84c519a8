"""The result store on disk (`DiskStore`: one JSON file per entry, in the folder of the
environment's generation, `cache_sweep`) and a memory layer over a store (`Layered`).

Standard library only at module level, as `coursekit.cache`, which imports it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coursekit import cache_sweep
from coursekit.cache_env import _salt, environment
from coursekit.cache_files import (
    FORMAT,
    _prepare,
    _read_json,
    _write_json,
    cache_root,
    inside_cache,
    sha256,
)
from coursekit.store import carry

STORE = "store"  # the result store's folder, in the cache's versioned one


class DiskStore:
    """A `ResultStore` on disk: namespace/key -> JSON value, one file per entry.

    The file name is a hash of (environment salt, namespace, key), in the salt's generation
    (`cache_sweep`: the oldest are swept); the entry repeats the key and salt, and a mismatch
    (a collision, a corrupted or truncated file) reads as a miss.
    """

    def __init__(self, project_root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = cache_root(project_root)
        self._env = dict(env) if env is not None else None
        self._salt: str | None = None
        self._base: Path | None = None
        self._claimed = False  # whether this store marked its generation used
        self.writable = True
        self.declined: list[str] = []  # results not kept (clock-dependent): see RunCache

    @property
    def salt(self) -> str:
        if self._salt is None:
            self._salt = _salt(self._env if self._env is not None else environment())
        return self._salt

    @property
    def store(self) -> Path:
        """The folder of every environment's generation."""
        return self.root / FORMAT / STORE

    @property
    def generation(self) -> Path:
        """The folder of this environment's entries and pack (`cache_sweep`)."""
        return cache_sweep.generation(self.store, self.salt)

    def claim(self) -> None:
        """Mark this environment's generation used (once: `cache_sweep.claim`), in a store
        reached without a symbolic link (the sweep removes what the store holds)."""
        if not self._claimed:
            self._claimed = True
            if inside_cache(self.store / "entry"):
                cache_sweep.claim(self.store, self.salt)

    def _path(self, namespace: str, key: str) -> Path:
        if self._base is None:
            self._base = self.generation
        digest = sha256(f"{self.salt}\0{namespace}\0{key}")
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in namespace)[:40]
        return self._base / safe / digest[:2] / f"{digest[2:]}.json"

    def get(self, namespace: str, key: str) -> Any | None:
        entry = _read_json(self._path(namespace, key))
        if (
            not isinstance(entry, dict)
            or entry.get("salt") != self.salt
            or entry.get("namespace") != namespace
            or entry.get("key") != key
        ):
            return None
        return entry.get("value")

    def put(self, namespace: str, key: str, value: Any) -> None:
        if not self.writable:
            return
        try:
            _prepare(self.root)
        except OSError:
            self.writable = False
            return
        self.claim()
        entry = {"salt": self.salt, "namespace": namespace, "key": key, "value": value}
        if not _write_json(self._path(namespace, key), entry):
            # unwritable folder or a value JSON cannot hold: the result is simply not kept
            return

    def decline(self, namespace: str, key: str, why: str) -> None:
        """Not kept, and an entry an earlier run left under the same key is removed."""
        self.declined.append(why)
        with contextlib.suppress(OSError):
            self._path(namespace, key).unlink(missing_ok=True)


class Layered:
    """A memory layer over another store: what one run reads or writes twice, it reads once."""

    def __init__(self, below: Any) -> None:
        self.below = below
        self.memory: dict[tuple[str, str], Any] = {}

    def get(self, namespace: str, key: str) -> Any | None:
        value = self.memory.get((namespace, key))
        if value is None:
            value = self.below.get(namespace, key)
            if value is not None:
                self.memory[(namespace, key)] = value
        return value

    def put(self, namespace: str, key: str, value: Any) -> None:
        self.memory[(namespace, key)] = value
        self.below.put(namespace, key, value)

    def decline(self, namespace: str, key: str, why: str) -> None:
        self.memory.pop((namespace, key), None)
        self.below.decline(namespace, key, why)

    def carry(self, namespace: str, key: str) -> bool:
        """`store.carry` below: nothing is read, so nothing is held here."""
        carry(self.below, namespace, key)
        return True

    def forget(self, namespace: str) -> None:
        """Let go of what is held in memory under `namespace`, here and below (a long-lived
        process's, once it no longer reads it). Nothing on disk changes."""
        for key in [k for k in self.memory if k[0] == namespace]:
            del self.memory[key]
        forget = getattr(self.below, "forget", None)
        if forget is not None:
            forget(namespace)
