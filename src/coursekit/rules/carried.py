"""What of one run's derived facts (`Course.derived`, keyed as coursekit.rules.facts keys them)
still holds in the course a patch makes of it: the language server's and the daemon's edited
lessons (`carried`), and a book manifest whose text alone changed (`carried_past_manifests`).
What is kept is not worked out again, so a key that could hold a stale value must go.
"""

from __future__ import annotations

from coursekit.rules.facts import FILES, MANIFESTS


def carried(derived: dict[object, object], touched: set[str]) -> dict[object, object]:
    """What of one run's derived facts still holds in a course where only the texts of some
    lessons changed (the same files, each lesson loaded before and now), in the chapters
    `touched`: the manifests' facts, which files each chapter holds, and the digests and
    summaries of the chapters not touched."""
    # (inline, not a call per key: the derived facts of 1,000 chapters are ~13,000 keys)
    return {
        key: value
        for key, value in derived.items()
        if type(key) is tuple
        and key[:1] == ("facts",)
        and (
            key[:2] == MANIFESTS
            or key == FILES
            or (key[:2] == ("facts", "chapter") and key[2] not in touched)
            or (key[:2] == ("facts", "summary") and key[3] not in touched)
        )
    }


def carried_past_manifests(derived: dict[object, object]) -> dict[object, object]:
    """What of one run's derived facts still holds in a course where only a book manifest's
    content changed (its id, its chapters and every file as they were): which files each
    chapter holds, each chapter's digest, the facts that read of a book manifest no more
    than that (`BOOK_FIELDS_UNREAD`), and the chapter keys and summaries that read no other
    fact (a summary is a function of its chapter's files and its named facts alone). Not the
    other manifests' facts, nor a key or summary that reads one."""
    # (inline, not a call per key: the derived facts of 1,000 chapters are ~13,000 keys)
    unread = _UNREAD
    kept: dict[object, object] = {}
    for key, value in derived.items():
        if type(key) is not tuple or key[:1] != ("facts",) or len(key) < 2:
            continue
        kind = key[1]
        if kind == "chapter":  # its digest; a key of its digest and of facts
            holds = len(key) == 3 or (key[3] == "key" and unread.issuperset(key[4:]))
        elif kind == "summary":  # (name, chapter id, facts)
            holds = unread.issuperset(key[4:])
        elif kind == "manifests":
            holds = len(key) > 2 and (
                key[2] in unread or (key[2] == "of" and len(key) in (4, 5) and key[3] in unread)
            )
        else:
            holds = key == FILES
        if holds:
            kept[key] = value
    return kept


# The facts that read of a book manifest its id and its chapters' list alone, if anything.
BOOK_FIELDS_UNREAD = ("chapter_ids", "chapter_summaries", "course_ladder", "course_notation")
_UNREAD = frozenset(BOOK_FIELDS_UNREAD)
