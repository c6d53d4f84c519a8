"""Meta: diagnostics about coursekit's own directives (CK0xx), found by `coursekit.suppress`.

These are documented here and emitted after the rules ran, when suppressions are applied.
"""

from __future__ import annotations

from coursekit.diagnostics import Severity
from coursekit.rules.base import documented

documented(
    "CK001",
    "unused-suppression",
    """\
    A suppression comment suppresses nothing: no diagnostic it names is on its line or in
    its block. Remove it, so that it cannot hide a future problem by accident.

    Only suppressions naming a rule that is enabled are judged.

    Fails:
        title: From Recurrence to Attention   # coursekit: ignore[CK106]
    Passes:
        id: II.02   # coursekit: ignore[CK106]
    """,
    "meta",
    Severity.WARNING,
)

documented(
    "CK002",
    "invalid-suppression",
    """\
    A suppression comment coursekit cannot understand: it names no code, names a code or
    prefix that matches no rule, is misspelt, or opens a block it never closes (an
    `ignore-start` without `ignore-end` runs to the end of the file; an `ignore-end` without
    `ignore-start` does nothing).

    Syntax: in YAML, `# coursekit: ignore[CK301]` at the end of a line (that line) or alone
    on a line (the next line and the block under it), and `# coursekit: ignore-start[CK3]` ...
    `# coursekit: ignore-end`; in Markdown, `<!-- coursekit: ignore[CK201] -->` on the line
    or alone on the line before, and the same start/end pair. Codes by code, prefix or name.

    Fails:
        id: II.02   # coursekit: ignore
    Passes:
        id: II.02   # coursekit: ignore[CK106]
    """,
    "meta",
    Severity.WARNING,
)
