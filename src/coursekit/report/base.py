"""What every reporter receives, and the registry of reporters by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field

from coursekit.diagnostics import Diagnostic
from coursekit.records import record


@record(frozen=True)
class Report:
    diagnostics: Sequence[Diagnostic]
    sources: Mapping[str, str] = field(default_factory=dict)  # path -> text, for excerpts
    color: bool = False
    notes: Sequence[str] = ()  # one line each under the summary (e.g. a weaker sandbox)
    # Verification coverage, for `--statistics`: chapter -> kind -> status -> count.
    coverage: Mapping[str, Mapping[str, Mapping[str, int]]] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")


Reporter = Callable[[Report], str]

REPORTERS: dict[str, Reporter] = {}


def reporter(name: str) -> Callable[[Reporter], Reporter]:
    def register(func: Reporter) -> Reporter:
        REPORTERS[name] = func
        return func

    return register


_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """Text that encodes as UTF-8 whatever the file names were.

    Python decodes a file name's non-UTF-8 bytes as lone surrogates (`os.fsdecode`); no UTF-8
    output can carry them, so each becomes U+FFFD, the replacement character. (SARIF's URIs keep
    the exact bytes, percent-encoded.)
    """
    return _SURROGATE.sub("\ufffd", text)
