"""The document models: one per kind of file in a course (see docs/format.md).

These mirror the YAML one to one; `extra="forbid"` makes an unknown key an error. Anything a
rule judges (a gap in numbering, a missing alt text, two correct options) is allowed here and
reported by its rule, so the author gets the rule's precise message, not a schema error.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from coursekit.model.base import Node

Scalar = int | float | str | bool


def empty_list() -> list[Any]:
    """A new empty list: a model field's default factory. pydantic asks each factory's
    signature whether it takes the validated data, and `list`'s, a builtin's, is parsed from
    its text with `tokenize` (~0.5 ms a field; 26 fields, in every process)."""
    return []


AssumptionKind = Literal["positive", "nonnegative", "integer", "real"]


class NotationEntry(Node):
    symbol: str = Field(description="The symbol as LaTeX, e.g. 'd_k' or '\\mathrm{softmax}'.")
    meaning: str
    local: bool = Field(
        default=False,
        description="A chapter's deliberate local override of a course-wide meaning.",
    )
    assume: list[AssumptionKind] = Field(
        default_factory=empty_list,
        description=(
            "What sympy may assume of the symbol in every lesson that sees this entry "
            "(e.g. [positive, integer] for a count), as if each lesson's `assume` said it."
        ),
    )
    shape: list[str | int] | None = Field(
        default=None,
        description=(
            "The symbol is a matrix of this shape, e.g. [T, d_k] (T rows, d_k columns; each "
            "dimension a symbol or a whole number); [d] is a column; a scalar has none. "
            "Every formula using it is shape-checked."
        ),
    )
    axes: list[str] | None = Field(
        default=None,
        description=(
            "What each axis of `shape` indexes, e.g. [queries, features]: products and "
            "row-wise functions must then sum over matching axes."
        ),
    )
    rowwise: bool = Field(
        default=False,
        description=(
            "The symbol is a function applied row by row (e.g. '\\mathrm{softmax}'): it keeps "
            "a matrix's shape and normalises each row over the columns."
        ),
    )


class Strand(Node):
    id: str
    purpose: str


class Requirements(Node):
    strands: dict[str, int] = Field(default_factory=dict)
    problems: int = 0
    variants: int = 0
    exercises: int = 0


class MaturityLevel(Node):
    id: str
    name: str
    description: str | None = None
    requires: Requirements = Field(default_factory=Requirements)


class CourseManifest(Node):
    """course.yaml: the books, the strands, the maturity ladder, the course-wide notation."""

    title: str
    books: list[str]
    strands: list[Strand]
    maturity: list[MaturityLevel]
    notation: list[NotationEntry] = Field(default_factory=empty_list)


class ApparatusEntry(Node):
    id: str = Field(description="0.<AREA>.<NN>, e.g. 0.IT.01")
    title: str
    status: Literal["written", "planned"] = "written"
    summary: str
    notation: list[NotationEntry] = Field(default_factory=empty_list)

    @property
    def area(self) -> str:
        parts = self.id.split(".")
        return parts[1] if len(parts) == 3 else ""


class BookManifest(Node):
    """<BOOK>/book.yaml. Book 0 carries the apparatus."""

    id: str
    title: str
    summary: str | None = None
    areas: dict[str, str] = Field(default_factory=dict)
    apparatus: list[ApparatusEntry] = Field(default_factory=empty_list)
    chapters: list[str] = Field(default_factory=empty_list)


class ApparatusLink(Node):
    id: str
    title: str | None = Field(default=None, description="If shown, must equal the entry's title.")


class Proposition(Node):
    number: int
    claim: str = ""
    gloss: str = ""


class Figure(Node):
    number: int
    title: str
    caption: str = ""
    alt: str | None = None
    asset: str
    claims: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Orders of growth in the title, caption or alt text, as written (`O(T)`), "
            "each mapped to the id of the order claim that checks it."
        ),
    )


class ItemRef(Node):
    """One item of a chapter: a written lesson, or a planned item with its strand and title."""

    lesson: str | None = None
    planned: str | None = None
    strand: str | None = None
    title: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ItemRef:
        if (self.lesson is None) == (self.planned is None):
            raise ValueError(
                "an item is either `lesson: <id>` or `planned: <id>`, not both or none"
            )
        if self.planned is not None and (self.strand is None or self.title is None):
            raise ValueError("a planned item needs `strand` and `title`")
        if self.lesson is not None and (self.strand is not None or self.title is not None):
            raise ValueError(
                "a written lesson takes its strand and title from its front matter; "
                "remove `strand`/`title` here"
            )
        return self

    @property
    def id(self) -> str:
        return self.lesson if self.lesson is not None else (self.planned or "")


class ChapterManifest(Node):
    """<BOOK>/<N>-<slug>/chapter.yaml."""

    id: str
    title: str
    authors: list[str] = Field(default_factory=empty_list)
    thesis: str
    dek: str
    problem: str
    maturity: str
    status: Literal["draft", "published"] = "draft"
    apparatus: list[ApparatusLink] = Field(default_factory=empty_list)
    notation: list[NotationEntry] = Field(default_factory=empty_list)
    propositions: list[Proposition] = Field(default_factory=empty_list)
    figures: list[Figure] = Field(default_factory=empty_list)
    items: list[ItemRef] = Field(default_factory=empty_list)
    problems: list[str] = Field(default_factory=empty_list)
    exercises: list[str] = Field(default_factory=empty_list)


class Assumptions(Node):
    positive: list[str] = Field(default_factory=empty_list)
    nonnegative: list[str] = Field(default_factory=empty_list)
    integer: list[str] = Field(default_factory=empty_list)
    real: list[str] = Field(default_factory=empty_list)


class Claim(Node):
    """A statement about declared formulas that sympy checks (see `coursekit explain CK8`)."""

    id: str
    kind: Literal["identity", "solve", "value", "order", "inequality", "shape"]
    expr: str | None = None
    lhs: str | None = None
    rhs: str | None = None
    op: Literal["<", "<=", ">", ">=", "=="] | None = None
    equation: str | None = None
    for_: str | None = Field(default=None, alias="for")
    where: dict[str, Scalar] = Field(default_factory=dict)
    when: str | None = None
    value: Scalar | None = None
    tolerance: float | None = None
    digits: int | None = None
    solutions: list[Scalar] = Field(default_factory=empty_list)
    order: str | None = None
    shape: list[str | int] | None = Field(
        default=None, description="A shape claim's dimensions, e.g. [T, d_v] ([] for a scalar)."
    )
    axes: list[str] | None = Field(
        default=None, description="A shape claim's axes, e.g. [queries, values] (optional)."
    )
    cost: str | None = Field(
        default=None,
        description=(
            "value/order (or identity, as lhs): count the multiply-adds of this expression's "
            "matrix products."
        ),
    )
    memory: str | None = Field(
        default=None,
        description="value/order (or identity, as lhs): count the entries of this expression's value.",
    )
    variables: list[str] | None = Field(
        default=None,
        description="An order claim's growing variables (default: the free symbols).",
    )
    note: str | None = None


class QuizOption(Node):
    text: str
    correct: bool = False


class QuizQuestion(Node):
    kind: Literal["numeric", "single", "select_all"]
    prompt: str
    options: list[QuizOption] = Field(default_factory=empty_list)
    answer: float | int | None = None
    margin: float | int | None = None
    claim: str | None = None
    explanation: str | None = None


class ReadingSource(Node):
    kind: Literal["paper", "book", "article", "video", "course", "code", "web"]
    title: str
    authors: list[str] = Field(default_factory=empty_list)
    year: int | None = None
    identifier: str | None = Field(default=None, description="arXiv id, DOI or URL")
    note: str | None = None


# What `coursekit new` writes is marked `status: stub` until the author has written it: a stub
# is owed content, never counted as written (and a published chapter may hold none).
WritingStatus = Literal["stub", "written"]
STUB_HELP = "`stub` until written (as `coursekit new` leaves it): owed, not counted as written."


class LessonFrontMatter(Node):
    """The YAML front matter of a lesson's Markdown file."""

    title: str
    strand: str
    reading_time: int = Field(description="Minutes.")
    assume: Assumptions = Field(default_factory=Assumptions)
    formulas: dict[str, str] = Field(default_factory=dict)
    claims: list[Claim] = Field(default_factory=empty_list)
    quiz: list[QuizQuestion] = Field(default_factory=empty_list)
    reading: list[ReadingSource] = Field(default_factory=empty_list)
    given: list[Scalar] = Field(
        default_factory=empty_list,
        description=(
            "Numbers the lesson states as inputs rather than results (`1000`, `0.1`): "
            "a number in the text equal to one of them needs no claim."
        ),
    )
    status: WritingStatus = Field(default="written", description=STUB_HELP)


class Solution(Node):
    value: Any = None
    text: str | None = None
    rtol: float = 0.0
    atol: float = 0.0


class WorkedProblem(Node):
    """problems/<id>/problem.yaml."""

    title: str
    variant: str
    statement: str
    program: str = "solution.py"
    solution: Solution
    supports: list[int] = Field(default_factory=empty_list)
    status: WritingStatus = Field(default="written", description=STUB_HELP)


class Exercise(Node):
    """exercises/<id>/exercise.yaml."""

    title: str
    statement: str
    solution: Solution
    program: str | None = None
    supports: list[int] = Field(default_factory=empty_list)
    status: WritingStatus = Field(default="written", description=STUB_HELP)


DOCUMENT_KINDS: dict[str, type[Node]] = {
    "course": CourseManifest,
    "book": BookManifest,
    "chapter": ChapterManifest,
    "lesson": LessonFrontMatter,
    "problem": WorkedProblem,
    "exercise": Exercise,
}
