"""Which of a chapter's documents validated with no problem, kept between runs by content.

A lesson, problem or exercise whose text is one this record saw validate cleanly is not
validated again at the load: the loader builds it deferred (`coursekit.model.deferred`), and
only a rule that reads its `meta` pays for validating it. The record is one store entry per
chapter folder: path -> [the SHA-256 of the file's text, what the load needs of the document
without validating it (a lesson's body start and line, a problem's program)]. The cache's
salt covers coursekit's own code, so a changed schema never trusts an older record.

Off for a load that keeps validated models itself (the language server, the daemon) or reads
unsaved buffers: there every document is validated once and kept; and for a run whose store
is dropped with it (`check --no-cache`), which keeps nothing for a later run.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coursekit.store import ResultStore

NAMESPACE = "clean"
FORMAT = 1  # bump when a row's shape changes


class StaleRecord(RuntimeError):
    """A document the record vouched for did not validate when read (a damaged cache)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} was recorded as valid but no longer validates: "
            "delete the .coursekit_cache folder and run again"
        )


class CleanDocuments:
    """One chapter's record: what the last run kept, and what this load found clean."""

    def __init__(
        self, store: ResultStore | None, chapter_dir: str, digests: dict[str, str]
    ) -> None:
        self.store = store
        self.entry = f"{FORMAT}:{chapter_dir}"
        self.digests = digests  # the texts' digests the known tree vouches for
        self._kept: dict[str, Any] | None = None  # read at the first document: most have none
        self.now: dict[str, list[Any]] = {}

    @property
    def kept(self) -> dict[str, Any]:
        if self._kept is None:
            found = self.store.get(NAMESPACE, self.entry) if self.store is not None else None
            self._kept = found if isinstance(found, dict) else {}
        return self._kept

    def _digest(self, path: str, text: str) -> str:
        known = self.digests.get(path)  # the known tree's, of the same bytes
        if known is not None:
            return known
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def look(self, path: str, text: str, digest: str | None = None) -> tuple[str, list[Any] | None]:
        """The digest of the document's text ("" when the record is off; `digest` when given,
        the known tree's of its bytes), and what was kept of it when it last validated
        cleanly with this very text (else None)."""
        if self.store is None:
            return "", None
        digest = digest or self._digest(path, text)
        row = self.kept.get(path)
        if not (isinstance(row, list) and len(row) == 2 and row[0] == digest):
            return digest, None
        return digest, list(row[1]) if isinstance(row[1], list) else None

    def clean(self, path: str, digest: str, needed: list[Any]) -> None:
        """The document at `path` (its text's `digest`, from `look`) validated with no
        problem, or is loaded deferred; `needed` is what a deferred load of it takes from
        the record (plain JSON data)."""
        if self.store is not None:
            self.now[path] = [digest, needed]

    def forget(self) -> None:
        """The record vouched for a document that did not validate: the next load trusts none
        of the chapter's documents, and reports what is wrong with them."""
        if self.store is not None:
            self.store.put(NAMESPACE, self.entry, {})

    def save(self) -> None:
        """Write the record back when this load found another set of clean documents."""
        if self.store is not None and (self.now or self._kept) and self.now != self.kept:
            self.store.put(NAMESPACE, self.entry, self.now)
