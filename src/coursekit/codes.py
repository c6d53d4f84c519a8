"""Codes the loader emits (their documentation lives in rules/structure.py)."""

YAML_SYNTAX = "CK101"
UNREADABLE = "CK102"
UNKNOWN_KEY = "CK103"
WRONG_TYPE = "CK104"
MISSING_KEY = "CK105"
MISSING_FILE = "CK109"
UNLISTED_FILE = "CK110"
