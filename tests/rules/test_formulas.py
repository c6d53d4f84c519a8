"""CK8xx: the formula family, each rule failing and passing on a small lesson, plus the real course."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coursekit.config import Config, Limits
from coursekit.load import load_course
from coursekit.model.base import Location
from coursekit.options import Options
from coursekit.rules import formulas
from coursekit.rules.base import REGISTRY, Context, Finding, MemoryStore

REPO = Path(__file__).resolve().parents[2]
LESSON_PATH = "course/I/1-first/lessons/intro.md"

FRONT = """\
---
title: Goodbye to recurrence
strand: basics
reading_time: 5
assume:
  positive: [T, d, d_h, d_x, d_k, d_v]
  integer: [T]
formulas:
  recurrence: T*(d_h**2 + d_h*d_x)
  grid: T**2*d_k + T**2*d_v
  ratio: T/d
claims:
  - id: rec-t50
    kind: value
    expr: recurrence
    where: {T: 50, d_h: 512, d_x: 512}
    value: 26214400
  - id: ratio
    kind: identity
    lhs: grid / recurrence
    rhs: ratio
    where: {d_h: d, d_x: d, d_k: d, d_v: d}
  - id: crossing-512
    kind: solve
    lhs: grid
    rhs: recurrence
    for: T
    where: {d_h: 512, d_x: 512, d_k: 512, d_v: 512}
    solutions: [512]
  - id: cheaper
    kind: inequality
    lhs: grid
    op: "<"
    rhs: recurrence
    where: {d_h: d, d_x: d, d_k: d, d_v: d}
    when: T < d
quiz:
  - kind: numeric
    prompt: With $d = 512$, at what $T$ do the two costs meet?
    answer: 512
    margin: 0
    claim: crossing-512
---
"""
BODY = """\
Across the sentence the recurrence costs

$$T\\,(d_h^2 + d_h d_x)$$ {#eq:recurrence}

and the grid costs

$$T^2 d_k + T^2 d_v$$ {#eq:grid}

so that, with every width equal to $d$, the ratio is

$$\\frac{T}{d}.$$ {#eq:ratio}

At fifty tokens the recurrence costs [26,214,400]{claim=rec-t50} multiplications.
"""


def write_lesson(course: Path, front: str = FRONT, body: str = BODY) -> None:
    (course.parent / LESSON_PATH).write_text(front + body, encoding="utf-8")


def context(course: Path, config: Config | None = None, **options: object) -> Context:
    """The course loaded, as every rule of one run sees it."""
    loaded = load_course(course, course.parent)
    return Context(course=loaded.course, config=config or Config(), options=Options(**options))  # type: ignore[arg-type]


def findings(
    course: Path, code: str, config: Config | None = None, **options: object
) -> list[Finding]:
    ctx = context(course, config, **options)
    check = REGISTRY[code].check
    assert check is not None
    return list(check(ctx))


def line_of(course: Path, needle: str) -> int:
    text = (course.parent / LESSON_PATH).read_text(encoding="utf-8")
    return text[: text.index(needle)].count("\n") + 1


CODES = [f"CK8{n:02d}" for n in range(1, 14)]


def test_the_family_is_registered_with_docs() -> None:
    for code in CODES:
        rule = REGISTRY[code]
        assert rule.family == "formulas"
        assert "Fails:" in rule.doc and "Passes:" in rule.doc, code


@pytest.mark.parametrize("code", CODES)
def test_a_correct_lesson_passes(tiny_course: Path, code: str) -> None:
    write_lesson(tiny_course)
    assert findings(tiny_course, code) == []


def test_formula_outside_the_whitelist(tiny_course: Path, tmp_path: Path) -> None:
    marker = tmp_path / "x"
    evil = f"__import__('os').system('touch {marker}')"
    write_lesson(tiny_course, FRONT.replace("  ratio: T/d\n", f"  ratio: T/d\n  evil: {evil}\n"))
    (found,) = findings(tiny_course, "CK801")
    assert found.location == Location(LESSON_PATH, line_of(tiny_course, "evil:"), 9)
    assert "attribute access" in found.message
    assert not marker.exists()


def test_claim_field_syntax_error_points_into_the_field(tiny_course: Path) -> None:
    write_lesson(tiny_course, FRONT.replace("lhs: grid / recurrence", "lhs: grid / (recurrence"))
    (found,) = findings(tiny_course, "CK801")
    assert found.location.line == line_of(tiny_course, "lhs: grid / (recurrence")
    assert "claim 'ratio', lhs" in found.message


def test_latex_outside_the_subset(tiny_course: Path) -> None:
    write_lesson(
        tiny_course, body=BODY.replace("$$T^2 d_k + T^2 d_v$$", "$$T^2 d_k \\approx T^2 d_v$$")
    )
    (found,) = findings(tiny_course, "CK802")
    assert found.location.line == line_of(tiny_course, "\\approx")
    assert "only '=' chains" in found.message


def test_latex_of_the_ratio_turned_upside_down(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace("\\frac{T}{d}.", "\\frac{d}{T}."))
    (found,) = findings(tiny_course, "CK803")
    assert found.location == Location(LESSON_PATH, line_of(tiny_course, "\\frac{d}{T}"), 3)
    assert "d/T" in found.message and "T/d" in found.message


def test_recurrence_changed_to_3td2_fails_claims_and_equation(tiny_course: Path) -> None:
    write_lesson(
        tiny_course, FRONT.replace("recurrence: T*(d_h**2 + d_h*d_x)", "recurrence: 3*T*d_h**2")
    )
    assert [f.location.line for f in findings(tiny_course, "CK803")] == [
        line_of(tiny_course, "$$T\\,(d_h^2")
    ]
    false = findings(tiny_course, "CK804")
    assert {f.message.split("'")[1] for f in false} >= {"rec-t50", "ratio"}
    assert findings(tiny_course, "CK808")  # the prose number no longer matches either


def test_value_claim_false_points_at_its_value(tiny_course: Path) -> None:
    write_lesson(tiny_course, FRONT.replace("value: 26214400", "value: 26214401"))
    (found,) = findings(tiny_course, "CK804")
    assert found.location.line == line_of(tiny_course, "value: 26214401")
    assert "is 26,214,400, the claim says 26,214,401" in found.message
    assert findings(tiny_course, "CK808") == []  # the prose shows the computed value


def test_inequality_claim_false(tiny_course: Path) -> None:
    write_lesson(tiny_course, FRONT.replace("when: T < d", "when: T > d"))
    (found,) = findings(tiny_course, "CK804")
    assert "inequality claim 'cheaper' is false" in found.message and "fails at" in found.message


def test_unproven_claim(tiny_course: Path) -> None:
    extra = '  - {id: bounded, kind: inequality, lhs: sin(x), op: "<", rhs: "2"}\nquiz:'
    write_lesson(tiny_course, FRONT.replace("quiz:", extra, 1))
    (found,) = findings(tiny_course, "CK805")
    assert "could not be proven" in found.message


def test_an_equation_sympy_cannot_decide_is_an_error(tiny_course: Path) -> None:
    """Issue 12: an `unproven` equation used to pass silently (no rule mapped it)."""
    front = FRONT.replace("  ratio: T/d\n", "  ratio: T/d\n  squash: tanh(T)\n")
    body = BODY + "\n$$\\frac{\\exp(2T) - 1}{\\exp(2T) + 1}$$ {#eq:squash}\n"
    write_lesson(tiny_course, front, body)
    (found,) = findings(tiny_course, "CK805")
    assert found.location.line == line_of(tiny_course, "{#eq:squash}")
    assert found.message.startswith("equation 'squash' could not be proven")
    assert "assume" in found.message and "where" in found.message
    assert REGISTRY["CK805"].severity == "error"


def test_t_squared_over_d_claimed_theta_t_is_false(tiny_course: Path) -> None:
    """Issue 12: it was only 'could not be proven' (CK805); for a fixed d it grows as T**2."""
    extra = "  - {id: lin, kind: order, expr: T**2/d, order: T}\nquiz:"
    write_lesson(tiny_course, FRONT.replace("quiz:", extra, 1))
    assert findings(tiny_course, "CK805") == []
    (found,) = findings(tiny_course, "CK804")
    assert found.location.line == line_of(tiny_course, "id: lin")
    assert "order claim 'lin' is false" in found.message and "grows faster in T" in found.message


def test_zero_digits_and_zero_value_no_longer_pass_anything(tiny_course: Path) -> None:
    """Issue 12: `digits: 0` rounded every number to 0, so `value: 0` held for any expression."""
    extra = "  - {id: any, kind: value, expr: recurrence, where: {T: 5, d_h: 2, d_x: 3}, value: 0, digits: 0}\nquiz:"
    write_lesson(tiny_course, FRONT.replace("quiz:", extra, 1))
    (found,) = findings(tiny_course, "CK807")
    assert found.location.line == line_of(tiny_course, "id: any")
    assert "claim 'any': digits must be" in found.message and "from 1 to 30" in found.message


def test_timeout(tiny_course: Path) -> None:
    slow = '  - {id: slow, kind: identity, lhs: "(a+b+c+d+e+f)**30*(a-b+c-d+e-f)**30", rhs: "1"}\nquiz:'
    write_lesson(tiny_course, FRONT.replace("quiz:", slow, 1))
    config = Config(limits=Limits(sympy_seconds=0.5))
    found = findings(tiny_course, "CK806", config)
    # on a loaded machine another job may also overrun half a second; the slow one always does
    assert "claim 'slow': timed out after 0.5 s" in [f.message for f in found]


def test_a_claim_that_eats_memory_stops_at_its_limit(tiny_course: Path) -> None:
    # 2**(9**999) is refused as a constant on its own, but not once it hides behind a name
    hungry = (
        "  big: 9**999\n  huge: 2**big\nclaims:\n"
        '  - {id: hungry, kind: identity, lhs: huge, rhs: "huge + 1"}\n'
    )
    write_lesson(tiny_course, FRONT.replace("claims:\n", hungry, 1))
    config = Config(limits=Limits(sympy_seconds=20, sympy_memory_mb=400))
    messages = [f.message for f in findings(tiny_course, "CK813", config)]
    assert "claim 'hungry': the check crashed: ran out of memory" in messages


def test_invalid_claim(tiny_course: Path) -> None:
    write_lesson(tiny_course, FRONT.replace("    value: 26214400\n", ""))
    (found,) = findings(tiny_course, "CK807")
    assert "needs value" in found.message


def test_number_in_prose_edited(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace("26,214,400", "26,214,401"))
    (found,) = findings(tiny_course, "CK808")
    line = line_of(tiny_course, "[26,214,401]")
    text = (tiny_course.parent / LESSON_PATH).read_text().splitlines()[line - 1]
    assert found.location == Location(LESSON_PATH, line, text.index("26,214,401") + 1)
    assert found.message == "the prose says 26,214,401, but claim rec-t50 computes 26,214,400"


def test_prose_cites_an_unknown_claim(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace("claim=rec-t50", "claim=rec-t5"))
    (found,) = findings(tiny_course, "CK809")
    assert "did you mean 'rec-t50'" in found.message


def test_formula_never_shown(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace(" {#eq:grid}", ""))
    (found,) = findings(tiny_course, "CK810")
    assert found.location.line == line_of(tiny_course, "grid: T**2")
    assert REGISTRY["CK810"].severity == "warning"


def test_equation_label_without_formula(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace("{#eq:grid}", "{#eq:gird}"))
    (found,) = findings(tiny_course, "CK811")
    assert "did you mean 'grid'" in found.message
    assert REGISTRY["CK811"].severity == "error"  # a mistyped label must not pass as checked


def test_quiz_answer_disagrees(tiny_course: Path) -> None:
    write_lesson(tiny_course, FRONT.replace("answer: 512", "answer: 500"))
    (found,) = findings(tiny_course, "CK812")
    assert found.location.line == line_of(tiny_course, "answer: 500")
    assert "500" in found.message and "512" in found.message


SHOWN = "$$x$$ {#eq:nothing} and [1]{claim=none}"


@pytest.mark.parametrize(
    "hidden",
    [
        f"```\n{SHOWN}\n```",
        f"<!-- {SHOWN} -->",
        f"````\n```\n{SHOWN}\n````",
        f"  ```\n{SHOWN}\n  ```",
        f"``{SHOWN} ` ``",
    ],
    ids=["fence", "html comment", "four-backtick fence", "indented fence", "double backticks"],
)
def test_code_and_comments_are_not_read(tiny_course: Path, hidden: str) -> None:
    # The CK8 scanner used to read all but the first (CK2/CK5 blanked them): one scanner now.
    write_lesson(tiny_course, body=BODY + "\n" + hidden + "\n")
    assert findings(tiny_course, "CK811") == [] and findings(tiny_course, "CK809") == []


def test_structural_runs_skip_the_family(tiny_course: Path) -> None:
    write_lesson(tiny_course, body=BODY.replace("26,214,400", "26,214,401"))
    assert findings(tiny_course, "CK808", formulas=False) == []


def test_verdicts_are_cached_in_the_store(
    tiny_course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_lesson(tiny_course, body=BODY.replace("26,214,400", "26,214,401"))
    store = MemoryStore()
    loaded = load_course(tiny_course, tiny_course.parent)

    def run() -> list[Finding]:
        ctx = Context(course=loaded.course, config=Config(), store=store)
        check = REGISTRY["CK808"].check
        assert check is not None
        return list(check(ctx))

    first = run()
    import coursekit.verify

    def boom(*args: object, **kwargs: object) -> object:
        raise AssertionError("verify_document ran again")

    monkeypatch.setattr(coursekit.verify, "verify_document", boom)
    monkeypatch.setattr(coursekit.verify, "verify_documents", boom)
    assert run() == first and len(first) == 1


def test_scan_body_offsets() -> None:
    body = "a $$x$$ b\n\n$$2Td^2$$ {#eq:rec}\n[1.95]{claim=r}"
    equations, numbers = formulas.scan_body(body)
    (eq,) = equations
    assert (eq.label, eq.latex) == ("rec", "2Td^2")
    assert body[eq.latex_offset : eq.latex_offset + 5] == "2Td^2"
    assert body[eq.label_offset :].startswith("{#eq:rec}")
    (number,) = numbers
    assert (number.claim, number.text) == ("r", "1.95")
    assert body[number.offset :].startswith("1.95]")


SEED = REPO / "tests/fixtures/seed-course/course"
REAL = REPO / "course"


@pytest.mark.parametrize("source", [SEED, REAL], ids=["seed", "course"])
def test_the_real_course_passes(tmp_path: Path, source: Path) -> None:
    if not source.is_dir():
        pytest.skip(f"{source} not present")
    course = tmp_path / "course"
    shutil.copytree(source, course)
    ctx = context(course)  # one for every rule, as in a run: the maths is verified once
    for code in CODES:
        rule = REGISTRY[code]
        if rule.severity == "error":
            assert rule.check is not None
            assert list(rule.check(ctx)) == [], code


def test_real_lesson_number_edit_fails_on_its_line(tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(SEED, course)
    lesson = course / "II/2-from-recurrence-to-attention/lessons/goodbye-to-recurrence.md"
    text = lesson.read_text(encoding="utf-8").replace("[26,214,400]", "[26,214,401]")
    lesson.write_text(text, encoding="utf-8")
    (found,) = findings(course, "CK808")
    assert found.location.line == text[: text.index("[26,214,401]")].count("\n") + 1
