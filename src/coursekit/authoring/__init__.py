"""Authoring: round-trip edits of course files, atomic writes, scaffolding and safe fixes.

Nothing here knows about click; `commands/new.py` and `commands/fix.py` drive it.
"""
