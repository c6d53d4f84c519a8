"""Owed content as one self-contained HTML page: the course dashboard.

The same `CourseOwed` that `owed --format json` prints, drawn as one table per book (a row per
chapter: maturity, status, a bar per strand, problems, variants, exercises, what it owes, the
Book 0 entries it waits for) and a course total. No script, no network: the CSS is inline, the
bars are the counts' own backgrounds (their text is their alternative), and every count links to the files behind it,
relative to where the page is written (`prefix` leads from there to the repository root).
Light and dark follow `prefers-color-scheme`; print keeps the bars and breaks between rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from html import escape

from coursekit.model.tree import LoadFailure
from coursekit.owed import ChapterOwed, Count, CourseOwed, unverified
from coursekit.report.html_style import CSS


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _href(prefix: str, path: str) -> str:
    # Paths are repository-relative with "/" separators; only URL-special characters need care,
    # and "./" keeps a first folder named like "c:" from reading as a URL scheme.
    quoted = path.replace("%", "%25").replace("#", "%23").replace("?", "%3F").replace(" ", "%20")
    url = prefix + quoted
    if ":" in url.split("/", 1)[0]:
        url = "./" + url
    return _e(url)


def _files(prefix: str, paths: tuple[str, ...]) -> str:
    """Numbered links to each file behind a count, in the course's order.

    Numbers rather than names keep a 1,000-chapter page under 2 MB and the columns narrow; the
    row and column headers say whose files they are.
    """
    return "".join(f'<a href="{_href(prefix, p)}">{n}</a>' for n, p in enumerate(paths, 1))


def _count(count: Count, prefix: str, paths: tuple[str, ...], note: str = "") -> str:
    """A count cell: "written/required" drawn over its bar, then links to its files.

    The bar is the count's own element (a background sized by `--w`), so its text alternative
    is the count itself, read with the column's header; a thousand chapters draw 8,000 bars.
    """
    if count.required == 0:
        number = f'<td class="none"><b>{count.written}/{count.required}</b>'
    else:
        share = min(100, round(100 * count.written / count.required))
        state = "ok" if count.met else "short"
        number = f'<td class="{state}"><b style="--w:{share}%">{count.written}/{count.required}</b>'
    return f"{number}{_files(prefix, paths)}{f'<small>{_e(note)}</small>' if note else ''}</td>"


def _failure(failure: LoadFailure, prefix: str) -> str:
    where = failure.location
    place = f"{where.path}:{where.line}:{where.column}"
    return (
        f'<li><a href="{_href(prefix, where.path)}">{_e(place)}</a> '
        f"<code>{_e(failure.code)}</code> {_e(failure.message)}</li>"
    )


def _failures(failures: tuple[LoadFailure, ...], prefix: str) -> str:
    if not failures:
        return ""
    items = "".join(_failure(f, prefix) for f in failures)
    return f'<ul class="fail" aria-label="does not load">{items}</ul>'


def _chapter_cell(chapter: ChapterOwed, prefix: str) -> str:
    ident = _e(chapter.id)
    if chapter.path:
        ident = f'<a href="{_href(prefix, chapter.path)}">{ident}</a>'
    title = "does not load" if not chapter.loads else chapter.title
    return (
        f'<th scope="row">{ident} <span class="t">{_e(title)}</span>'
        f"{_failures(chapter.failures, prefix)}</th>"
    )


def _status_cell(chapter: ChapterOwed, prefix: str) -> str:
    stubs = ""
    if chapter.stubs:
        s = "s" if len(chapter.stubs) != 1 else ""
        stubs = f"<small>{len(chapter.stubs)} stub{s}</small>{_files(prefix, chapter.stubs)}"
    return f"<td>{_e(chapter.status)}{stubs}</td>"


def _owes_cell(chapter: ChapterOwed, prefix: str) -> str:
    if not chapter.loads:
        return '<td class="owes unknown"><b>?</b></td>'
    state = "short" if chapter.owes else "ok"
    value: str = str(chapter.owes)
    if chapter.path:
        value = f'<a href="{_href(prefix, chapter.path)}">{value}</a>'
    return f'<td class="owes {state}"><b>{value}</b></td>'


def _book0_cell(chapter: ChapterOwed, prefix: str) -> str:
    if not chapter.planned_apparatus:
        return "<td></td>"
    book0 = chapter.files.get("apparatus", ())
    target = book0[0] if book0 else ""
    entries = ", ".join(
        f'<a href="{_href(prefix, target)}">{_e(e)}</a>' if target else _e(e)
        for e in chapter.planned_apparatus
    )
    return f'<td class="wait">{entries}</td>'


def _row(chapter: ChapterOwed, strands: list[str], prefix: str) -> str:
    if not chapter.loads:
        empty = "<td></td>" * (len(strands) + 5)
        return f'<tr class="broken">{_chapter_cell(chapter, prefix)}{empty}{_owes_cell(chapter, prefix)}<td></td></tr>'
    none = Count(0, 0)
    files = chapter.files
    problems = files.get("problems", ())
    note = unverified(chapter.unverified) if chapter.unverified else ""
    cells = [
        _chapter_cell(chapter, prefix),
        f"<td>{_e(f'{chapter.maturity} {chapter.maturity_name}'.strip() or '?')}</td>",
        _status_cell(chapter, prefix),
        *(_count(chapter.strands.get(name, none), prefix, files.get(name, ())) for name in strands),
        _count(chapter.problems, prefix, problems, note),
        _count(chapter.variants, prefix, ()),
        _count(chapter.exercises, prefix, files.get("exercises", ())),
        _owes_cell(chapter, prefix),
        _book0_cell(chapter, prefix),
    ]
    return f'<tr id="{_e(chapter.id)}">{"".join(cells)}</tr>'


def _head(strands: list[str]) -> str:
    names = [
        "Chapter",
        "Maturity",
        "Status",
        *strands,
        "Problems",
        "Variants",
        "Exercises",
        "Owes",
        "Book 0 waits for",
    ]
    cells = "".join(f'<th scope="col">{_e(name)}</th>' for name in names)
    return f"<thead><tr>{cells}</tr></thead>"


def _strands(owed: CourseOwed) -> list[str]:
    names: dict[str, None] = {}
    for chapter in owed.chapters:
        names.update(dict.fromkeys(chapter.strands))
    return list(names)


def _books(owed: CourseOwed) -> Iterator[tuple[str, list[ChapterOwed]]]:
    grouped: dict[str, list[ChapterOwed]] = {}
    for chapter in owed.chapters:
        grouped.setdefault(chapter.book, []).append(chapter)
    yield from grouped.items()


def _total_table(owed: CourseOwed, strands: list[str]) -> str:
    total = owed.total
    none = Count(0, 0)
    cells = [
        '<th scope="row">Course total</th>',
        f"<td>{len(owed.chapters)} chapter{'' if len(owed.chapters) == 1 else 's'}</td>",
        f"<td>{len(total.stubs)} stub{'' if len(total.stubs) == 1 else 's'}</td>",
        *(_count(total.strands.get(name, none), "", ()) for name in strands),
        _count(total.problems, "", ()),
        _count(total.variants, "", ()),
        _count(total.exercises, "", ()),
        f'<td class="owes {"short" if owed.owes else "ok"}"><b>{owed.owes}</b></td>',
        f"<td>{len(total.planned_apparatus) or ''}</td>",
    ]
    return (
        '<section aria-labelledby="total"><h2 id="total">Course total</h2>'
        "<table><caption>The course summed chapter by chapter</caption>"
        f"{_head(strands)}<tbody><tr>{''.join(cells)}</tr></tbody></table></section>"
    )


def render_html(
    owed: CourseOwed, title: str = "", books: Mapping[str, str] | None = None, prefix: str = ""
) -> str:
    """The dashboard page. `books` maps a book id to its title; `prefix` leads to the repo root."""
    strands = _strands(owed)
    total = owed.total
    lessons = Count(0, 0)
    for count in total.strands.values():
        lessons += count
    caveat = owed.caveat()
    n = len(owed.chapters)
    summary = (
        f"{n} chapter{'' if n == 1 else 's'} · owes {owed.owes} "
        "(problems + exercises + variants beyond the problems) · "
        f"strand lessons {lessons.written}/{lessons.required}"
    )
    heading = f"Owed content{' · ' + title if title else ''}"
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        f"<title>{_e(heading)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>{_e(heading)}</h1><p class="sum">{_e(summary)}</p>',
        f'<p class="caveat" role="note">{_e(caveat)}</p>' if caveat else "",
        _failures(owed.failures, prefix),
        "</header><main>",
    ]
    for book, chapters in _books(owed):
        name = (books or {}).get(book, "")
        label = f"Book {book}{' · ' + name if name else ''}" if book else "Other chapters"
        anchor = f"book-{book or 'none'}"
        parts.append(
            f'<section aria-labelledby="{_e(anchor)}"><h2 id="{_e(anchor)}">{_e(label)}</h2>'
            f"<table><caption>{_e(label)}: each chapter's written content against what its "
            f"maturity requires</caption>{_head(strands)}<tbody>"
        )
        parts += [_row(chapter, strands, prefix) for chapter in chapters]
        parts.append("</tbody></table></section>")
    parts += [_total_table(owed, strands), "</main></body></html>\n"]
    return "".join(parts)
