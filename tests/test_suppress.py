"""Inline suppressions in YAML and Markdown, for a line or a block; CK001 and CK002."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coursekit.config import Config
from coursekit.diagnostics import Diagnostic
from coursekit.engine import check
from coursekit.options import Options
from coursekit.project import find_project
from coursekit.suppress import apply, parse

REPO = Path(__file__).resolve().parent.parent
RULES = [
    ("CK111", "unknown-name"),
    ("CK106", "id-malformed"),
    ("CK201", "symbol-undeclared"),
    ("CK001", "unused-suppression"),
    ("CK002", "invalid-suppression"),
]


def d(path: str, line: int, code: str = "CK111", name: str = "unknown-name") -> Diagnostic:
    return Diagnostic(path, line, 1, code, "m", name=name)


def covered(path: str, text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    return [(s.first, s.last, s.selectors) for s in parse(path, text, RULES).suppressions]


def test_yaml_end_of_line_covers_that_line() -> None:
    assert covered("a.yaml", "a: 1\nb: 2   # coursekit: ignore[CK111, id-malformed]\n") == [
        (2, 2, ("CK111", "id-malformed"))
    ]


def test_yaml_own_line_covers_the_next_block() -> None:
    text = "x: 1\n# coursekit: ignore[CK1]\nitems:\n  - a\n\n  - b\nnext: 2\n"
    assert covered("a.yaml", text) == [(2, 6, ("CK1",))]


def test_yaml_start_end_block() -> None:
    text = "# coursekit: ignore-start[CK111]\na: 1\nb: 2\n# coursekit: ignore-end\nc: 3\n"
    assert covered("a.yaml", text) == [(1, 4, ("CK111",))]


def test_a_hash_inside_quotes_is_not_a_comment() -> None:
    assert covered("a.yaml", "a: '# coursekit: ignore[CK111]'\n") == []


@pytest.mark.parametrize(
    "text",
    [
        "problem: >-\n  A folded text.\n  # coursekit: ignore[CK111]\n  more text\nnext: 1\n",
        "problem: |\n  A literal text.\n\n  # coursekit: ignore[CK111]\nnext: 1\n",
        'title: "a quoted text that runs on\n  # coursekit: ignore[CK111] and ends"\n',
        "items:\n  - >\n    # coursekit: ignore[CK111]\n",
    ],
    ids=["folded", "literal", "quoted", "in a list"],
)
def test_a_directive_inside_a_yaml_scalar_is_text(text: str) -> None:
    assert covered("a.yaml", text) == []
    assert parse("a.yaml", text, RULES).problems == []
    lesson = "---\n" + text + "---\nBody.\n"
    assert covered("l.md", lesson) == []


def test_a_real_comment_after_a_block_scalar_still_counts() -> None:
    text = "problem: >-\n  A folded text.\n# coursekit: ignore[CK111]\nnext: 1\n"
    assert covered("a.yaml", text) == [(3, 4, ("CK111",))]


@pytest.mark.parametrize(
    "body",
    [
        "`<!-- coursekit: ignore[CK201] -->`\n",
        "``a ` <!-- coursekit: ignore[CK201] -->``\n",
        "```\n<!-- coursekit: ignore[CK201] -->\n```\n",
        "````md\n```\n<!-- coursekit: ignore[CK201] -->\n````\n",
        "Text.\n\n    <!-- coursekit: ignore[CK201] -->\n",
        "  ~~~\n<!-- coursekit: ignore-start[CK201] -->\n  ~~~\n",
    ],
    ids=["span", "double span", "fence", "four-backtick fence", "indented code", "tilde fence"],
)
def test_a_directive_shown_as_code_is_not_a_suppression(body: str) -> None:
    text = "---\ntitle: T\n---\n" + body + "$x$\n"
    assert covered("l.md", text) == []
    assert parse("l.md", text, RULES).problems == []


def test_a_multi_line_markdown_comment_is_a_directive() -> None:
    text = "---\ntitle: T\n---\n<!--\n  coursekit: ignore[CK201]\n-->\nnext line\n"
    assert covered("l.md", text) == [(4, 7, ("CK201",))]


def test_markdown_same_line_and_line_before_and_block() -> None:
    text = (
        "---\ntitle: T   # coursekit: ignore[CK111]\n---\n"
        "text <!-- coursekit: ignore[CK201] -->\n"
        "<!-- coursekit: ignore[CK201] -->\n"
        "\n"
        "next line\n"
        "<!-- coursekit: ignore-start[CK2] -->\nx\ny\n<!-- coursekit: ignore-end -->\n"
    )
    assert covered("l.md", text) == [
        (2, 2, ("CK111",)),
        (4, 4, ("CK201",)),
        (5, 7, ("CK201",)),
        (8, 11, ("CK2",)),
    ]


def test_a_markdown_body_hash_is_a_heading_not_a_suppression() -> None:
    assert covered("l.md", "---\ntitle: T\n---\n# coursekit: ignore[CK111]\n") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1  # coursekit: ignore\n", "must name what it ignores"),
        ("a: 1  # coursekit: ignore[]\n", "must name what it ignores"),
        ("a: 1  # coursekit: ignore[CK999]\n", "'CK999' matches no rule"),
        ("a: 1  # coursekit: ignroe[CK111]\n", "not a suppression coursekit understands"),
        ("# coursekit: ignore-end\n", "without an 'ignore-start'"),
        ("# coursekit: ignore-start[CK111]\na: 1\n", "never closed"),
    ],
)
def test_invalid_suppressions_are_ck002(text: str, message: str) -> None:
    problems = parse("a.yaml", text, RULES).problems
    assert [p.code for p in problems] == ["CK002"]
    assert message in problems[0].message


def test_apply_drops_covered_and_reports_unused() -> None:
    texts = {"a.yaml": "a: 1   # coursekit: ignore[CK111]\nb: 2   # coursekit: ignore[CK106]\n"}
    kept = apply([d("a.yaml", 1), d("a.yaml", 2)], texts, Config())
    codes = sorted((k.code, k.line) for k in kept)
    assert codes == [("CK001", 2), ("CK111", 2)]
    assert "no 'CK106' diagnostic" in next(k for k in kept if k.code == "CK001").message


def test_unused_is_not_reported_for_a_rule_that_is_switched_off() -> None:
    texts = {"a.yaml": "b: 2   # coursekit: ignore[CK106]\n"}
    assert apply([], texts, Config(ignore=("CK106",))) == []
    assert [k.code for k in apply([], texts, Config(ignore=("CK001",)))] == []


def test_per_file_ignores() -> None:
    config = Config(per_file_ignores={"course/I/*": ("unknown-name",)})
    kept = apply([d("course/I/1/chapter.yaml", 3), d("course/II/x.yaml", 3)], {}, config)
    assert [k.path for k in kept] == ["course/II/x.yaml"]


def test_end_to_end_on_a_copy_of_the_real_course(tmp_path: Path) -> None:
    shutil.copytree(REPO / "course", tmp_path / "course")
    chapter = tmp_path / "course/I/1-sequences/chapter.yaml"
    text = chapter.read_text(encoding="utf-8")
    text = text.replace("maturity: M0\n", "maturity: M9   # coursekit: ignore[CK111]\n")
    text = text.replace("status: draft\n", "status: draft   # coursekit: ignore[unknown-name]\n")
    chapter.write_text(text, encoding="utf-8")
    found = check(find_project(tmp_path), options=Options(exec=False)).diagnostics
    mine = [(x.code, x.line) for x in found if x.path.endswith("1-sequences/chapter.yaml")]
    status_line = text.splitlines().index("status: draft   # coursekit: ignore[unknown-name]") + 1
    assert mine == [("CK001", status_line)]


def test_front_matter_at_the_end_of_the_file_keeps_its_last_line() -> None:
    text = "---\na: 1\ntitle: T   # coursekit: ignore[CK111]\n---"
    assert covered("l.md", text) == [(3, 3, ("CK111",))]


def test_a_text_seen_without_directives_is_not_scanned_again_but_a_new_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import coursekit.suppress as suppress

    plain = "a: 1\nb: 2\n" * 50
    found = [d("a.yaml", 2)]
    assert apply(found, {"a.yaml": plain}, Config()) == found
    parsed: list[str] = []
    real = suppress.parse

    def counted(path: str, text: str, rules: object = None) -> object:
        parsed.append(text)
        return real(path, text, RULES)

    monkeypatch.setattr(suppress, "parse", counted)
    assert apply(found, {"a.yaml": plain}, Config()) == found
    assert parsed == []  # the same text object: known to hold nothing
    edited = "a: 1\nb: 2   # coursekit: ignore[CK111]\n"
    assert apply(found, {"a.yaml": edited}, Config()) == []
    assert parsed == [edited]


def test_a_long_lived_process_scans_only_the_texts_an_edit_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import coursekit.suppress as suppress
    from coursekit import memo

    monkeypatch.setattr(suppress, "_last", ({}, frozenset()))
    plain = "a: 1\nb: 2\n"
    holding = "a: 1\nb: 2   # coursekit: ignore[CK111]\n"
    found = [d("a.yaml", 2), d("b.yaml", 2)]
    runs: list[tuple[dict[str, str], list[str]]] = [  # the texts, and the paths scanned anew
        ({"a.yaml": plain, "b.yaml": plain}, ["a.yaml", "b.yaml"]),
        ({"a.yaml": holding, "b.yaml": plain}, ["a.yaml"]),  # a directive added
        ({"a.yaml": holding, "b.yaml": "".join(["a: 1\n", "b: 2\n"])}, ["b.yaml"]),  # equal
        ({"a.yaml": plain, "b.yaml": holding}, ["a.yaml", "b.yaml"]),  # moved to b.yaml
        ({"b.yaml": holding}, []),  # a.yaml gone
        ({"a.yaml": holding, "b.yaml": holding}, ["a.yaml"]),  # a.yaml back, not as it was
    ]
    scanned: list[str] = []
    from coursekit.codes import may_hold_directive as real

    def counted(path: str, text: str) -> bool:
        scanned.append(path)
        return real(path, text)

    for texts, anew in runs:
        monkeypatch.setattr(memo, "REMEMBERING", False)  # a one-shot check scans every text
        one_shot = apply(found, texts, Config())
        monkeypatch.setattr(memo, "REMEMBERING", True)  # as the daemon and the language server
        monkeypatch.setattr(suppress, "may_hold_directive", counted)
        scanned.clear()
        assert apply(found, texts, Config()) == one_shot
        assert sorted(scanned) == anew
        monkeypatch.setattr(suppress, "may_hold_directive", real)
    assert apply(found, runs[1][0], Config()) == [d("b.yaml", 2)]


@pytest.mark.parametrize("remembering", [False, True])
def test_a_text_the_load_knows_plain_is_not_scanned_while_it_is_that_very_text(
    monkeypatch: pytest.MonkeyPatch, remembering: bool
) -> None:
    """A replayed chapter's texts its record found no directive in (`Course.plain`): a fresh
    run at 1,000 chapters scanned ~27 MB of them (~15 ms) to find none."""
    import coursekit.suppress as suppress
    from coursekit import memo

    monkeypatch.setattr(memo, "REMEMBERING", remembering)
    monkeypatch.setattr(suppress, "_last", ({}, frozenset()))
    plain = "a: 1\nb: 2\n"
    holding = "a: 1\nb: 2   # coursekit: ignore[CK111]\n"
    found = [d("a.yaml", 2), d("b.yaml", 2)]
    scanned: list[str] = []
    from coursekit.codes import may_hold_directive as real

    def counted(path: str, text: str) -> bool:
        scanned.append(path)
        return real(path, text)

    monkeypatch.setattr(suppress, "may_hold_directive", counted)
    texts = {"a.yaml": plain, "b.yaml": holding}
    assert apply(found, texts, Config(), {"a.yaml": plain}) == [d("a.yaml", 2)]
    assert scanned == ["b.yaml"]
    scanned.clear()
    again = "".join(["a: 1\n", "b: 2   # coursekit: ignore[CK111]\n"])  # another text object
    assert apply(found, {"a.yaml": again, "b.yaml": holding}, Config(), {"a.yaml": plain}) == []
    # a.yaml's text is not the plain one (b.yaml's is, again: a long-lived process remembers)
    assert sorted(scanned) == (["a.yaml"] if remembering else ["a.yaml", "b.yaml"])
