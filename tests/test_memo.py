"""coursekit.memo: a value is remembered for the very object it was worked out from."""

from __future__ import annotations

import pytest

from coursekit import memo
from coursekit.memo import ByIdentity


@pytest.fixture(autouse=True)
def remembering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "REMEMBERING", True)


def test_the_same_object_is_not_worked_out_again_an_equal_one_is() -> None:
    memo: ByIdentity[int] = ByIdentity(10)
    calls: list[object] = []
    first, twin = [1, 2], [1, 2]

    def length(of: list[int]) -> int:
        calls.append(of)
        return len(of)

    assert memo.get(first, lambda: length(first)) == 2
    assert memo.get(first, lambda: length(first)) == 2
    assert calls == [first]
    assert memo.get(twin, lambda: length(twin)) == 2
    assert calls == [first, twin]  # equal, but another object


def test_what_it_also_depends_on_is_compared() -> None:
    memo: ByIdentity[str] = ByIdentity(10)
    subject = object()
    assert memo.get(subject, lambda: "a", "limits 1") == "a"
    assert memo.get(subject, lambda: "b", "limits 1") == "a"
    assert memo.get(subject, lambda: "c", "limits 2") == "c"


def test_past_its_limit_it_forgets() -> None:
    memo: ByIdentity[int] = ByIdentity(2)
    kept = [object() for _ in range(3)]
    for n, subject in enumerate(kept):
        memo.get(subject, int, n)  # int(): 0, whatever n
    assert memo.get(kept[0], lambda: 99, 0) == 99  # forgotten when the third came
    assert memo.get(kept[2], lambda: 99, 2) == 0


def test_a_one_shot_process_remembers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "REMEMBERING", False)
    assert not memo.remembering()
    held: ByIdentity[int] = ByIdentity(10)
    subject = object()
    assert held.get(subject, lambda: 1) == 1
    assert held.get(subject, lambda: 2) == 2
    assert held._held == {}
    monkeypatch.setattr(memo, "REMEMBERING", True)
    assert memo.remembering()
    assert held.get(subject, lambda: 3) == 3
    assert held.get(subject, lambda: 4) == 3
