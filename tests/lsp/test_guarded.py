"""A handler that fails answers its default and says why in the log; the server lives on."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from coursekit.lsp.server import CourseServer, guarded


def test_an_exception_in_a_handler_becomes_a_log_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = CourseServer()
    logged: list[tuple[str, types.MessageType]] = []
    monkeypatch.setattr(server, "log", lambda message, kind: logged.append((message, kind)))

    @guarded(default=[])
    def broken(ls: CourseServer, params: Any) -> list[int]:
        raise KeyError("no such chapter")

    assert broken(server, None) == []
    ((message, kind),) = logged
    assert kind == types.MessageType.Error
    assert "broken failed: KeyError" in message and "no such chapter" in message


def test_an_out_of_band_error_is_logged_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    server = CourseServer()
    sent: list[str] = []
    monkeypatch.setattr(server, "window_log_message", lambda p: sent.append(p.message))
    monkeypatch.setattr(server, "window_show_message", lambda p: pytest.fail("a pop-up"))
    server.report_server_error(ValueError("bad JSON"), None)
    assert sent == ["coursekit lsp: ValueError: bad JSON"]
