"""A keystroke in a lesson: the lesson patched into the course the last check loaded.

Loading the course again for each keystroke would read, parse and validate every document (a
second at 100 chapters) to learn what the editor already says: one buffer changed. When nothing
on disk changed since the last load (`disk_table`: every file and folder of the course, by
inode, mtime and size, so a file added or removed is seen too) and every buffer that changed is
a lesson that loaded cleanly before and parses cleanly now, the new course is the old one with
those lessons replaced; anything else loads the course again. The rules then see one changed
document, and re-run where it lands (coursekit.incremental).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from coursekit.cache_stats import file_stamp
from coursekit.load import LoadResult
from coursekit.load.reader import DocumentReader, Models
from coursekit.load.yamlsafe import split_front_matter
from coursekit.model.documents import BookManifest, LessonFrontMatter
from coursekit.model.tree import Chapter, Course, Lesson
from coursekit.rules.carried import carried, carried_past_manifests

Stamp = tuple[int, ...]  # cache_stats.file_stamp: mtime, ctime, size, inode, device


def tree_entries(folder: Path | str) -> Iterator[os.DirEntry[str]]:
    """Every file and folder below `folder`, folders before what they hold (links are
    listed, never followed; a folder that cannot be listed is skipped)."""
    pending = [str(folder)]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            yield entry
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)


def disk_table(folder: Path) -> dict[str, Stamp]:
    """Every file and folder below `folder` (absolute path -> its stamp, as the cache's stat
    table keeps it: the ctime catches an edit whose mtime was put back)."""
    table: dict[str, Stamp] = {}
    for entry in tree_entries(folder):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        table[entry.path] = tuple(file_stamp(st))
    return table


def patched(
    loaded: LoadResult,
    changed: Mapping[Path, str],
    course_dir: Path,
    project_root: Path,
    models: Models,
) -> LoadResult | None:
    """`loaded` with the lessons whose buffers `changed` (absolute path -> text) re-read, or
    None when one of them is not a lesson that loads without a diagnostic, before and now."""
    course = loaded.course
    lessons = {
        lesson.path: lesson for c in course.chapters.values() for lesson in c.lessons.values()
    }
    reader = DocumentReader(course_dir, project_root, None, changed, models)
    reported = {d.path for d in loaded.diagnostics}  # a lesson with any is loaded again
    fresh: dict[str, tuple[Lesson, str]] = {}
    for path, text in changed.items():
        rel = reader.rel(path)
        old = lessons.get(rel)
        if old is None or rel in reported or reader.text(path) != text:  # (a NUL is reported)
            return None
        parts = split_front_matter(text)
        if parts is None:
            return None
        front, body, body_line = parts
        meta = reader.parse(front, rel, LessonFrontMatter, line_offset=1)
        if meta is None or reader.diagnostics:
            return None
        edited = replace(
            old, meta=meta, text=text, body_start=len(text) - len(body), body_line=body_line
        )
        fresh[rel] = (edited, text)
    _forget_older(models, reader.used)
    return LoadResult(course=_with(course, fresh), diagnostics=list(loaded.diagnostics))


def patched_book(
    loaded: LoadResult,
    path: Path,
    text: str,
    course_dir: Path,
    project_root: Path,
    models: Models,
) -> LoadResult | None:
    """`loaded` with the book.yaml at `path` re-read as `text` (a title renamed, an apparatus
    entry edited), or None unless that manifest loaded without a diagnostic before and does
    now, and still lists the same chapters under the same id: the loader's walk reads nothing
    else of it, so every chapter loads as it did. Of what the last run derived, only what the
    chapters' own files give is kept (`coursekit.rules.carried.carried_past_manifests`)."""
    course = loaded.course
    reader = DocumentReader(course_dir, project_root, None, {path: text}, models)
    rel = reader.rel(path)
    found = [(book_id, book) for book_id, book in course.books.items() if book.path == rel]
    if len(found) != 1 or _located_in(loaded, rel) or reader.text(path) != text:
        return None
    book_id, book = found[0]
    manifest = reader.parse(text, rel, BookManifest)
    if manifest is None or reader.diagnostics:
        return None
    if manifest.id != book.manifest.id or manifest.chapters != book.manifest.chapters:
        return None
    _forget_older(models, reader.used)
    books = {**course.books, book_id: replace(book, manifest=manifest)}
    texts = {**course.texts, rel: text}
    digests = {r: d for r, d in course.digests.items() if r != rel}
    derived = carried_past_manifests(course.derived)
    fresh = replace(course, books=books, texts=texts, digests=digests, derived=derived)
    return LoadResult(course=fresh, diagnostics=list(loaded.diagnostics))


def _located_in(loaded: LoadResult, rel: str) -> bool:
    """Whether anything the load reported or failed on points into the file `rel`."""
    course = loaded.course
    failures = [*course.failed, *(f for u in course.unloaded.values() for f in u.failures)]
    return any(d.path == rel for d in loaded.diagnostics) or any(
        f.location.path == rel for f in failures
    )


def _with(course: Course, fresh: Mapping[str, tuple[Lesson, str]]) -> Course:
    """A new course whose lessons at the paths of `fresh` are those (of what the last run
    derived, only the facts those lessons cannot change: coursekit.rules.carried.carried)."""
    chapters: dict[str, Chapter] = {}
    touched: set[str] = set()
    for chapter_id, chapter in course.chapters.items():
        if any(lesson.path in fresh for lesson in chapter.lessons.values()):
            touched.add(chapter_id)
            swapped = {
                k: fresh[v.path][0] if v.path in fresh else v for k, v in chapter.lessons.items()
            }
            chapter = replace(chapter, lessons=swapped)
        chapters[chapter_id] = chapter
    texts = dict(course.texts)
    texts.update((rel, text) for rel, (_, text) in fresh.items())
    digests = {rel: d for rel, d in course.digests.items() if rel not in fresh}
    derived = carried(course.derived, touched)
    return replace(course, chapters=chapters, texts=texts, digests=digests, derived=derived)


def _forget_older(models: Models, used: Models) -> None:
    """Keep one validated model per document: a long session must not keep every keystroke."""
    paths = {key[1] for key in used}
    for key in [k for k in models if k[1] in paths and k not in used]:
        del models[key]
    models.update(used)
