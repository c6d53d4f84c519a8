"""Codes the loader emits (their documentation lives in rules/structure.py), and what marks a
file that may hold a suppression directive (coursekit.suppress; the loader's replay records
which of a chapter's texts do)."""

YAML_SYNTAX = "CK101"
UNREADABLE = "CK102"
UNKNOWN_KEY = "CK103"
WRONG_TYPE = "CK104"
MISSING_KEY = "CK105"
MISSING_FILE = "CK109"
UNLISTED_FILE = "CK110"

DIRECTIVE_SUFFIXES = (".yaml", ".yml", ".md")  # the files a directive is read in
DIRECTIVE_MARKER = "coursekit:"


def may_hold_directive(path: str, text: str) -> bool:
    """Whether the text may hold a suppression directive (one that does not has none)."""
    return path.endswith(DIRECTIVE_SUFFIXES) and DIRECTIVE_MARKER in text
