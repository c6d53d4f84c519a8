"""Quiz and reading (CK6xx): questions can be graded, sources can be found, counts are computed."""

from __future__ import annotations

import re
from collections.abc import Iterator

from coursekit.diagnostics import Severity
from coursekit.markdown import scan
from coursekit.model.tree import Lesson
from coursekit.rules.base import Context, Finding, rule

ARXIV = re.compile(r"^arXiv:[0-9]{4}\.[0-9]{4,5}(v[0-9]+)?$")
ARXIV_OLD = re.compile(r"^arXiv:[a-z-]+(\.[A-Z]{2})?/[0-9]{7}(v[0-9]+)?$")  # hep-th/9901001
DOI = re.compile(r"^(doi:)?10\.[0-9]{4,9}/\S+$", re.I)
URL = re.compile(r"^https?://\S+$")
ISBN = re.compile(r"^ISBN[: ]?(?:97[89][- ]?)?(?:[0-9][- ]?){9}[0-9Xx]$")
BARE_ARXIV = re.compile(r"^(arxiv[: ]?)?([0-9]{4}\.[0-9]{4,5}(v[0-9]+)?)$", re.I)

_NUMBER = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|[0-9]+"
)
_QUIZ_NOUNS = r"questions?|boxes"
_READING_NOUNS = r"sources?|papers?|books?|articles?|videos?|readings?"
TYPED_QUIZ = re.compile(rf"\b(?:{_NUMBER})\s+(?:quiz\s+)?(?:{_QUIZ_NOUNS})\b", re.I)
TYPED_READING = re.compile(rf"\b(?:{_NUMBER})\s+(?:{_READING_NOUNS})\b", re.I)
# Each count pattern ends in its noun: prose without the noun cannot match, and looking for
# the noun alone is ~7x faster than trying every number word at every word boundary.
_NOUN_OF = {
    TYPED_QUIZ: re.compile(_QUIZ_NOUNS, re.I),
    TYPED_READING: re.compile(_READING_NOUNS, re.I),
}


def _lessons(ctx: Context) -> Iterator[Lesson]:
    for chapter in ctx.chapters():
        yield from chapter.lessons.values()


@rule("CK601", "quiz-answer-missing", per_chapter=())
def quiz_answer_missing(ctx: Context) -> Iterator[Finding]:
    """A quiz question has no answer: a numeric one without `answer`, a choice without options.

    Fails:
        quiz:
          - {kind: numeric, prompt: With $d = 512$, where do the costs meet?}
    Passes:
        quiz:
          - {kind: numeric, prompt: With $d = 512$, where do the costs meet?, answer: 512, margin: 0}
    """
    for lesson in _lessons(ctx):
        for index, question in enumerate(lesson.meta.quiz):
            if question.kind == "numeric" and question.answer is None:
                yield Finding(
                    lesson.meta.loc("quiz", index, "kind"),
                    f"numeric question {index + 1} has no `answer`",
                )
            elif question.kind != "numeric" and not question.options:
                yield Finding(
                    lesson.meta.loc("quiz", index, "options"),
                    f"{question.kind} question {index + 1} has no options to choose from",
                )


@rule("CK602", "single-choice-correct", per_chapter=())
def single_choice_correct(ctx: Context) -> Iterator[Finding]:
    """A single-choice question does not have exactly one correct option.

    Fails:
        - kind: single
          options: [{text: A, correct: true}, {text: B, correct: true}]
    Passes:
        - kind: single
          options: [{text: A, correct: true}, {text: B}]
    """
    for lesson in _lessons(ctx):
        for index, question in enumerate(lesson.meta.quiz):
            if question.kind != "single" or not question.options:
                continue
            correct = [o for o, option in enumerate(question.options) if option.correct]
            if len(correct) == 1:
                continue
            if correct:
                where = lesson.meta.loc("quiz", index, "options", correct[1])
                message = (
                    f"single-choice question {index + 1} marks {len(correct)} options correct "
                    f"(options {', '.join(str(c + 1) for c in correct)}); exactly one must be, "
                    "or make it `kind: select_all`"
                )
            else:
                where = lesson.meta.loc("quiz", index, "options")
                message = (
                    f"single-choice question {index + 1} has no correct option; "
                    "mark one with `correct: true`"
                )
            yield Finding(where, message)


@rule("CK603", "select-all-no-correct", per_chapter=())
def select_all_no_correct(ctx: Context) -> Iterator[Finding]:
    """A select-all question has no correct option (it is graded all-or-nothing on at least one).

    Fails:
        - kind: select_all
          options: [{text: A}, {text: B}]
    Passes:
        - kind: select_all
          options: [{text: A, correct: true}, {text: B}]
    """
    for lesson in _lessons(ctx):
        for index, question in enumerate(lesson.meta.quiz):
            if (
                question.kind == "select_all"
                and question.options
                and not any(option.correct for option in question.options)
            ):
                yield Finding(
                    lesson.meta.loc("quiz", index, "options"),
                    f"select-all question {index + 1} has no correct option; "
                    "mark at least one with `correct: true`",
                )


@rule("CK604", "numeric-margin-missing", per_chapter=())
def numeric_margin_missing(ctx: Context) -> Iterator[Finding]:
    """A numeric question has no `margin` (write `margin: 0` for an exact answer).

    Fails:
        - {kind: numeric, prompt: ..., answer: 512}
    Passes:
        - {kind: numeric, prompt: ..., answer: 512, margin: 0}
    """
    for lesson in _lessons(ctx):
        for index, question in enumerate(lesson.meta.quiz):
            if question.kind == "numeric" and question.margin is None:
                yield Finding(
                    lesson.meta.loc("quiz", index, "answer")
                    if question.answer is not None
                    else lesson.meta.loc("quiz", index),
                    f"numeric question {index + 1} has no `margin`; "
                    "write `margin: 0` if the answer is exact",
                )
            elif question.kind == "numeric" and question.margin is not None and question.margin < 0:
                yield Finding(
                    lesson.meta.loc("quiz", index, "margin"),
                    f"numeric question {index + 1} has a negative margin ({question.margin})",
                )


@rule("CK605", "quiz-option-invalid", per_chapter=())
def quiz_option_invalid(ctx: Context) -> Iterator[Finding]:
    """A quiz option is empty, or repeats another option of the same question.

    Fails:
        options: [{text: The chain of states}, {text: The chain of states}]
    Passes:
        options: [{text: The chain of states}, {text: The input terms}]
    """
    for lesson in _lessons(ctx):
        for index, question in enumerate(lesson.meta.quiz):
            seen: dict[str, int] = {}
            for o, option in enumerate(question.options):
                text = " ".join(option.text.split())
                where = lesson.meta.loc("quiz", index, "options", o, "text")
                if not text:
                    yield Finding(where, f"option {o + 1} of question {index + 1} is empty")
                elif text.casefold() in seen:
                    yield Finding(
                        where,
                        f"option {o + 1} of question {index + 1} repeats option "
                        f"{seen[text.casefold()] + 1}: '{text[:60]}'",
                    )
                seen.setdefault(text.casefold(), o)


@rule("CK606", "typed-count", Severity.WARNING, per_chapter=())
def typed_count(ctx: Context) -> Iterator[Finding]:
    """A lesson's prose types a count the renderer computes ("four questions", "1 paper").

    The page shows how many quiz questions and reading sources a lesson has, counted from its
    front matter; a number typed into the prose goes stale the day a question is added.
    Checked only when the lesson has a quiz (for questions) or a reading list (for sources).

    Fails:
        Test yourself with the four questions below.
    Passes:
        Test yourself with the questions below.
    """
    for lesson in _lessons(ctx):
        prose = scan(lesson.body).prose
        patterns = []
        if lesson.meta.quiz:
            patterns.append((TYPED_QUIZ, f"the quiz has {len(lesson.meta.quiz)}"))
        if lesson.meta.reading:
            patterns.append((TYPED_READING, f"the reading list has {len(lesson.meta.reading)}"))
        for pattern, actual in patterns:
            if _NOUN_OF[pattern].search(prose) is None:
                continue
            for match in pattern.finditer(prose):
                yield Finding(
                    lesson.body_loc(match.start()),
                    f"'{match.group(0)}' is a typed count; the page computes it ({actual}), "
                    "so drop the number",
                )


@rule("CK607", "reading-identifier", per_chapter=())
def reading_identifier(ctx: Context) -> Iterator[Finding]:
    """A further-reading identifier is not a well-formed arXiv id, DOI or URL.

    arXiv ids read `arXiv:1706.03762` (optionally with a version, `v5`); DOIs `10.<registrant>/<suffix>`;
    anything else is a full `https://` URL.

    Fails:
        identifier: 1706.03762
    Passes:
        identifier: arXiv:1706.03762
    """
    for lesson in _lessons(ctx):
        for index, source in enumerate(lesson.meta.reading):
            ident = (source.identifier or "").strip()
            if not ident:
                continue
            if (
                ARXIV.match(ident)
                or ARXIV_OLD.match(ident)
                or DOI.match(ident)
                or URL.match(ident)
                or ISBN.match(ident)
            ):
                continue
            bare = BARE_ARXIV.match(ident)
            hint = (
                f"; did you mean 'arXiv:{bare.group(2)}'?"
                if bare
                else " (expected arXiv:NNNN.NNNNN, 10.NNNN/..., or an https:// URL)"
            )
            yield Finding(
                lesson.meta.loc("reading", index, "identifier"),
                f"identifier '{ident}' of '{source.title}' is not an arXiv id, DOI or URL{hint}",
            )
