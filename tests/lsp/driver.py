"""A real LSP client (pygls's) driving `coursekit lsp` over stdio, with a blocking API for tests.

The client's event loop runs in a thread; each call waits for its answer with a timeout, and
`wait_for` polls the diagnostics the server published.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient

T = TypeVar("T")
TIMEOUT = 60.0


class Driver:
    def __init__(self, root: Path, debounce_ms: int = 20) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("coursekit-tests", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.logs: list[str] = []
        self.versions: dict[str, int] = {}
        self.lock = threading.Lock()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]  # pygls's decorator is untyped
        def published(params: types.PublishDiagnosticsParams) -> None:
            with self.lock:
                self.diagnostics[params.uri] = list(params.diagnostics)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)  # type: ignore[untyped-decorator]  # pygls's decorator is untyped
        def logged(params: types.LogMessageParams) -> None:
            self.logs.append(params.message)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)  # type: ignore[untyped-decorator]  # pygls's decorator is untyped
        def shown(params: types.ShowMessageParams) -> None:
            self.logs.append(params.message)

        self.run(self.client.start_io(sys.executable, "-m", "coursekit", "lsp", cwd=str(root)))
        self.run(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    root_uri=root.as_uri(),
                    initialization_options={"debounceMs": debounce_ms},
                )
            )
        )
        self.client.initialized(types.InitializedParams())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    # Documents -------------------------------------------------------------------------------

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        item = types.TextDocumentItem(
            uri=uri, language_id="markdown", version=1, text=path.read_text(encoding="utf-8")
        )
        self.call(
            lambda: self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(text_document=item)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=self.versions[uri]
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self.call(lambda: self.client.text_document_did_change(params))

    def close(self, uri: str) -> None:
        params = types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        self.call(lambda: self.client.text_document_did_close(params))

    def wait_for(
        self,
        uri: str,
        predicate: Callable[[list[types.Diagnostic]], bool],
        timeout: float = TIMEOUT,
    ) -> list[types.Diagnostic]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = self.diagnostics.get(uri)
            if found is not None and predicate(found):
                return found
            time.sleep(0.01)
        raise AssertionError(
            f"no matching diagnostics for {uri}: {self.diagnostics.get(uri)}; log: {self.logs}"
        )

    # Requests --------------------------------------------------------------------------------

    def where(self, uri: str, line: int, character: int) -> types.TextDocumentPositionParams:
        return types.TextDocumentPositionParams(
            types.TextDocumentIdentifier(uri=uri), types.Position(line, character)
        )

    def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        p = self.where(uri, line, character)
        return self.run(
            self.client.text_document_hover_async(types.HoverParams(p.text_document, p.position))
        )

    def definition(self, uri: str, line: int, character: int) -> Any:
        p = self.where(uri, line, character)
        return self.run(
            self.client.text_document_definition_async(
                types.DefinitionParams(p.text_document, p.position)
            )
        )

    def completion(self, uri: str, line: int, character: int) -> Any:
        p = self.where(uri, line, character)
        return self.run(
            self.client.text_document_completion_async(
                types.CompletionParams(p.text_document, p.position)
            )
        )

    def code_actions(
        self, uri: str, diagnostics: list[types.Diagnostic], line: int = 0
    ) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
        answer = self.run(self.client.text_document_code_action_async(params))
        return [a for a in answer or [] if isinstance(a, types.CodeAction)]

    def alive(self) -> bool:
        """The server still answers a request."""
        return self.hover(self.root.as_uri() + "/nowhere.md", 0, 0) is None

    def stop(self) -> None:
        try:
            self.run(self.client.shutdown_async(None), timeout=10)
            self.client.exit(None)
            self.run(self.client.stop(), timeout=10)  # type: ignore[no-untyped-call]
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)


def position(text: str, needle: str, shift: int = 0) -> tuple[int, int]:
    """0-based line and column of `needle` (plus `shift` characters) in `text`."""
    offset = text.index(needle) + shift
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)
