"""The one reading of Markdown every rule and the suppressions share: what is code, what is a
comment, what is maths, and where the links and claim tags are, all as offsets into the text.

Block structure comes from markdown-it-py (CommonMark): fenced code of any length and either
fence character, indented fences, fences inside list items and block quotes, indented code
blocks, unclosed fences (they run to the end of their container) and HTML blocks. markdown-it
gives blocks by line, so inline structure is read here, left to right over each block's own
lines, as CommonMark does: whichever construct begins first wins.

* a code span is a run of n backticks closed by the next run of exactly n (`` `a`b` ``); a run
  with no partner is literal text; a backslash escapes an opener outside code, never inside;
* an HTML comment is `<!-- ... -->` (also `<!-->` and `<!--->`), within its paragraph or HTML
  block; a comment that opens an HTML block and never closes runs to the block's end;
* maths is `$...$` or `$$...$$`, paired as TeX pairs them (`\\$` is a dollar, not a delimiter),
  inside one paragraph: an unclosed `$` is a dollar sign;
* a link is `[text](target)` (brackets pair as they nest; an image is not a link; a link inside
  another's text wins), a tag `[text]{key=value}`; both are read outside code and comments;
* a line no block claims (past markdown-it's nesting limit, say) is read as prose, not dropped.

Every search that can fail remembers its failure for the block, so hostile text is linear.

`scan(text)` is cached by text, so every rule that reads a lesson pays for it once. Front matter
(a lesson file read whole, as the suppressions do) is recognised with `with_front_matter=True`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt

from coursekit.frontmatter import front_matter
from coursekit.markdown.links import Link, Tag, links, tags
from coursekit.memo import per_text
from coursekit.records import record

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_INTERESTING = re.compile(r"[\\`<$]")
# A line that could open a code block or an HTML block, whatever container it sits in: past
# list markers and quote marks, four columns of indentation, a fence, or a `<`. Texts with none
# are all paragraphs, and a one-line one needs no block parse.
_MAYBE_BLOCK = re.compile(r"^[ \t>*+\-0-9.)]*?(?:\t| {4}|```|~~~|<)", re.M)


@record(frozen=True, slots=True)
class Region:
    """Text that is not prose: code, a comment or front matter. `end` is exclusive."""

    start: int
    end: int
    kind: str  # "front-matter" | "fence" | "code-block" | "code-span" | "comment"


@record(frozen=True, slots=True)
class Comment:
    start: int  # of `<!--`
    end: int  # after `-->` (or the end of its block, when unclosed)
    body: str  # between the markers


@record(frozen=True, slots=True)
class MathSpan:
    start: int  # offset of the opening `$`
    end: int  # after the closing `$`
    display: bool


@record(frozen=True)
class Scan:
    text: str
    regions: tuple[Region, ...]  # in order, not overlapping
    comments: tuple[Comment, ...]
    maths: tuple[MathSpan, ...]
    masked: str  # code, comments and front matter blanked (newlines kept): offsets unchanged
    links: tuple[Link, ...]
    tags: tuple[Tag, ...]
    body_start: int  # offset after the front matter (0 without)

    @property
    def prose(self) -> str:
        """`masked` with the maths blanked too: what a reader sees as words. Made when asked
        (~13 µs for a lesson), not kept: every scan is kept for the run, and a copy of every
        text it held was ~15 MB of a cold check at 1,000 chapters."""
        return _blank(self.masked, [(m.start, m.end) for m in self.maths])

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset."""
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Blocks only: inline structure is read below with exact offsets, which markdown-it's
    # inline tokens do not carry (and skipping them makes the parse ~3x cheaper).
    parser = MarkdownIt("commonmark")
    parser.disable("inline")
    return parser


@per_text(8192)
def scan(text: str, with_front_matter: bool = False) -> Scan:
    """The scanned view of a Markdown text (a lesson body, a caption, a whole lesson file)."""
    regions: list[Region] = []
    comments: list[Comment] = []
    maths: list[MathSpan] = []
    found = front_matter(text) if with_front_matter else None
    body_start = found[1] if found else 0
    if body_start:
        regions.append(Region(0, body_start, "front-matter"))
    for start, end, kind in _blocks(text, body_start):
        if kind in ("fence", "code-block"):
            regions.append(Region(start, end, kind))
        else:
            _inline(text, start, end, kind == "html", regions, comments, maths)
    regions.sort(key=lambda region: region.start)
    masked = _blank(text, [(r.start, r.end) for r in regions])
    return Scan(
        text=text,
        regions=tuple(regions),
        comments=tuple(comments),
        maths=tuple(maths),
        masked=masked,
        links=tuple(links(masked)),
        tags=tuple(tags(masked)),
        body_start=body_start,
    )


def _blocks(text: str, start: int) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each block below `start`: "fence", "code-block", "html", "inline"."""
    body = text[start:]
    if not body.strip():
        return []
    if "\n" not in body.strip("\n") and not _MAYBE_BLOCK.search(body):
        return [(start, len(text), "inline")]
    # markdown-it would read a lone `\r` as a line break: keep its lines equal to ours.
    tokens = _parser().parse(body.replace("\r", " "))
    starts = [0] + [m.end() for m in re.finditer("\n", body)]

    def offset(line: int) -> int:
        return start + (starts[line] if line < len(starts) else len(body))

    found: list[tuple[int, int, str]] = []
    covered = [False] * (len(starts) + 1)
    for token in tokens:
        if token.map is None:
            continue
        kind = {"fence": "fence", "code_block": "code-block", "html_block": "html"}.get(
            token.type, "inline" if token.type == "inline" else ""
        )
        if kind:
            first, last = token.map
            found.append((offset(first), offset(last), kind))
            covered[first:last] = [True] * (last - first)
    # Lines no block claims: blank ones, link definitions, and what markdown-it leaves unparsed
    # past its nesting limit. The text there is read as prose rather than silently dropped.
    line = 0
    while line < len(starts):
        if covered[line] or not body[starts[line] : offset(line + 1) - start].strip():
            line += 1
            continue
        first = line
        while line < len(starts) and not covered[line]:
            line += 1
        found.append((offset(first), offset(line), "inline"))
    return sorted(found)


def _inline(
    text: str,
    start: int,
    end: int,
    html: bool,
    regions: list[Region],
    comments: list[Comment],
    maths: list[MathSpan],
) -> None:
    """Code spans, comments and maths of one block, left to right (the first to begin wins).

    In an HTML block backticks are not code, and a comment left open runs to the block's end.
    A search that found no closer is remembered for the block (a later opener of the same kind
    cannot find one either), so hostile text costs linear time, not quadratic.
    """
    misses: dict[str, int] = {}
    stops: dict[int, int] = {}
    index = start
    while True:
        match = _INTERESTING.search(text, index, end)
        if match is None:
            return
        index = match.start()
        char = text[index]
        if char == "\\":
            index += 2 if index + 1 < end and text[index + 1] in _PUNCTUATION else 1
        elif char == "`":
            run = _run(text, index, end, "`")
            close = None if html else _closing_backticks(text, index + run, end, run, misses)
            if close is None:
                index += run
            else:
                regions.append(Region(index, close, "code-span"))
                index = close
        elif char == "<":
            close = _comment_end(text, index, end, html, misses, stops)
            if close is None:
                index += 1
            else:
                body_end = close - 3 if text.startswith("-->", close - 3) else close
                comments.append(Comment(index, close, text[index + 4 : max(index + 4, body_end)]))
                regions.append(Region(index, close, "comment"))
                index = close
        else:
            span = _math(text, index, end, misses)
            if span is None:
                index += _run(text, index, end, "$")
            else:
                maths.append(span)
                index = span.end


def _run(text: str, index: int, end: int, char: str) -> int:
    length = 0
    while index + length < end and text[index + length] == char:
        length += 1
    return length


@lru_cache(maxsize=64)
def _backticks(length: int) -> re.Pattern[str]:
    return re.compile(r"(?<!`)" + "`" * length + r"(?!`)")


def _closing_backticks(
    text: str, index: int, end: int, length: int, misses: dict[str, int]
) -> int | None:
    key = "`" * length
    if index >= misses.get(key, end + 1):
        return None
    match = _backticks(length).search(text, index, end)
    if match is None:
        misses[key] = index
        return None
    return match.end()


def _comment_end(
    text: str, index: int, end: int, html: bool, misses: dict[str, int], stops: dict[int, int]
) -> int | None:
    if not text.startswith("<!--", index):
        return None
    if html:  # an HTML block is raw: the browser's reading, up to the first `-->`
        searched = index >= misses.get("-->", end + 1)
        close = -1 if searched else text.find("-->", index + 2, end)
        if close < 0:
            misses["-->"] = index
        return end if close < 0 else close + 3
    for short in ("<!-->", "<!--->"):
        if text.startswith(short, index) and index + len(short) <= end:
            return index + len(short)
    close = _comment_close(text, index + 4, end, stops)
    return None if close < 0 else close + 3


def _comment_close(text: str, start: int, end: int, stops: dict[int, int]) -> int:
    """Where `-->` closes an inline comment whose text starts at `start`, or -1.

    CommonMark's pattern (markdown-it-py: `(?:[^-]|-[^-]|--[^>])*-->`) reads the text in
    steps that are decided by the next three characters, so the walk is deterministic and two
    walks that meet share the rest: each position's answer is kept (`stops`, per block), which
    keeps a text full of openers linear.
    """
    path: list[int] = []
    at = start
    result = -1
    while at < end:
        known = stops.get(at)
        if known is not None:
            result = known
            break
        path.append(at)
        if text[at] != "-":
            at += 1
        elif at + 1 < end and text[at + 1] != "-":
            at += 2
        elif at + 2 >= end:
            break  # a dash (or two) at the end: no step fits
        elif text[at + 2] == ">":
            result = at
            break
        else:
            at += 3
    for position in path:
        stops[position] = result
    return result


def _math(text: str, start: int, end: int, misses: dict[str, int]) -> MathSpan | None:
    """The maths opening at `start`, closed in the same block, or None (a dollar sign)."""
    display = text.startswith("$$", start) and start + 1 < end
    delimiter = "$$" if display else "$"
    if start >= misses.get(delimiter, end + 1):
        return None
    probe = start + len(delimiter)
    while True:
        close = text.find(delimiter, probe, end)
        if close < 0:
            misses[delimiter] = start
            return None
        if text[close - 1] != "\\":
            return MathSpan(start, close + len(delimiter), display)
        probe = close + 1


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        if end <= cursor:
            continue
        start = max(start, cursor)
        out.append(text[cursor:start])
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
