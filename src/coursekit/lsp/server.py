"""The language server: pygls wiring around `CourseState` and the feature modules.

Every handler is guarded: whatever a buffer holds, an exception becomes a log message and an
empty answer, never a dead server. Checking runs in a worker thread after a debounce, so typing
is never blocked; the newest edit wins.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from coursekit import __version__
from coursekit.lsp import actions, completion, definition, diagnostics, hover
from coursekit.lsp.positions import offset_at
from coursekit.lsp.state import CourseState, key

F = TypeVar("F", bound=Callable[..., Any])
SUFFIXES = (".md", ".yaml", ".yml", ".py")
DEFAULT_DEBOUNCE = 0.2  # seconds of quiet after a keystroke before the course is re-checked


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, but a request it cannot read gets an error response with its id.

    pygls logs a request whose params are not of its method's shape and drops it, so the
    client waiting on that id would wait until it gave up; JSON-RPC answers -32602."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:  # raised for the message itself, never a nested dict
            msg_id = data.get("id")
            if "method" in data and isinstance(msg_id, int | str) and type(msg_id) is not bool:
                self._send_response(msg_id, error=exc.to_response_error())
            raise


class CourseServer(LanguageServer):
    def __init__(self, course: Path | None = None) -> None:
        super().__init__("coursekit", __version__, protocol_cls=_Protocol)
        self.course_option = course
        self.state: CourseState | None = None
        self.debounce = DEFAULT_DEBOUNCE
        self.uris: dict[Path, str] = {}  # open documents: path -> the URI the client used
        self.pending: asyncio.Task[None] | None = None
        self.pending_programs = False  # the waiting check was asked to run programs
        self.generation = 0

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would show a pop-up; a bad buffer deserves a log line, not an alarm
        self.log(f"coursekit lsp: {type(error).__name__}: {error}", types.MessageType.Error)


def guarded(default: Any = None) -> Callable[[F], F]:
    """A handler that logs its exception and answers `default` instead of failing."""

    def wrap(handler: F) -> F:
        @wraps(handler)
        def run(server: CourseServer, params: Any) -> Any:
            try:
                return handler(server, params)
            except Exception as exc:
                server.log(
                    f"coursekit lsp: {handler.__name__} failed: {type(exc).__name__}: {exc}\n"
                    + traceback.format_exc(),
                    types.MessageType.Error,
                )
                return default

        return run  # type: ignore[return-value]

    return wrap


def _path(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return None if fs is None else key(fs)


def _tracked(server: CourseServer, uri: str) -> Path | None:
    """The file behind `uri` if it belongs to the course and is one coursekit reads."""
    path = _path(uri)
    state = server.state
    if path is None or state is None or not state.in_course(path):
        return None
    return path if path.suffix in SUFFIXES else None


# Checking -----------------------------------------------------------------------------------


def schedule(server: CourseServer, run_programs: bool = False, delay: float | None = None) -> None:
    """Check again after a quiet moment; a newer edit cancels the wait."""
    if server.state is None:
        return
    if server.pending is not None and not server.pending.done():
        server.pending.cancel()
        # an edit right after a save must not cancel the save's program runs
        run_programs = run_programs or server.pending_programs
    server.pending_programs = run_programs
    server.generation += 1
    wait = server.debounce if delay is None else delay
    server.pending = asyncio.ensure_future(
        _check_later(server, server.generation, wait, run_programs)
    )


async def _check_later(
    server: CourseServer, generation: int, wait: float, run_programs: bool
) -> None:
    try:
        await asyncio.sleep(wait)
        state = server.state
        if state is None:
            return
        snapshot = await asyncio.to_thread(state.analyse, run_programs)
        if generation != server.generation:
            return  # a newer edit is already on its way: do not publish a stale view
        publish(server, state, snapshot)
    except asyncio.CancelledError:
        pass
    except Exception as exc:
        server.log(
            f"coursekit lsp: checking failed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}",
            types.MessageType.Error,
        )


def publish(server: CourseServer, state: CourseState, snapshot: Any) -> None:
    for rel, found in state.to_publish(snapshot):
        path = state.absolute(rel)
        uri = server.uris.get(path, path.as_uri())
        text = state.text(rel)
        server.text_document_publish_diagnostics(diagnostics.publish_params(uri, found, text))


# Lifecycle and documents --------------------------------------------------------------------


def create(course: Path | None = None) -> CourseServer:
    server = CourseServer(course)

    @server.feature(types.INITIALIZE)
    @guarded()
    def initialize(ls: CourseServer, params: types.InitializeParams) -> None:
        from coursekit.config import ConfigError
        from coursekit.project import find_project

        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounceMs"), int | float):
            ls.debounce = max(0.0, float(options["debounceMs"]) / 1000)
        start = Path.cwd()
        if params.root_uri:
            start = Path(to_fs_path(params.root_uri) or start)
        elif params.workspace_folders:
            start = Path(to_fs_path(params.workspace_folders[0].uri) or start)
        try:
            project = find_project(start, ls.course_option)
        except ConfigError as exc:
            ls.log(f"coursekit lsp: {exc}; no course to check", types.MessageType.Warning)
            return
        from coursekit import cache

        # verdicts kept on disk (shared with `check`) and in memory across edits
        ls.state = CourseState(project, cache.Layered(cache.DiskStore(project.root)))

    @server.feature(types.INITIALIZED)
    @guarded()
    def initialized(ls: CourseServer, params: types.InitializedParams) -> None:
        schedule(ls, run_programs=True, delay=0)  # programs' verdicts mostly come from the cache

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: CourseServer, params: types.DidOpenTextDocumentParams) -> None:
        path = _tracked(ls, params.text_document.uri)
        if path is None or ls.state is None:
            return
        ls.uris[path] = params.text_document.uri
        ls.state.open(path, params.text_document.text)
        schedule(ls, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: CourseServer, params: types.DidChangeTextDocumentParams) -> None:
        path = _tracked(ls, params.text_document.uri)
        if path is None or ls.state is None:
            return
        document = ls.workspace.get_text_document(params.text_document.uri)
        ls.state.open(path, document.source)
        schedule(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @guarded()
    def did_save(ls: CourseServer, params: types.DidSaveTextDocumentParams) -> None:
        if _tracked(ls, params.text_document.uri) is not None:
            schedule(ls, run_programs=True, delay=0)  # worked problems run on save only

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: CourseServer, params: types.DidCloseTextDocumentParams) -> None:
        path = _tracked(ls, params.text_document.uri)
        if path is None or ls.state is None:
            return
        ls.uris.pop(path, None)
        ls.state.close(path)  # back to what is on disk
        schedule(ls)

    _features(server)
    return server


# Hover, definition, completion, code actions ------------------------------------------------


def _at(ls: CourseServer, uri: str, position: types.Position) -> tuple[str, int, str] | None:
    """The document's text, the cursor's offset and its project-relative path."""
    path = _tracked(ls, uri)
    if path is None or ls.state is None:
        return None
    if ls.state.snapshot is None:
        ls.state.analyse(formulas=False)
    rel = ls.state.rel(path)
    if rel is None:
        return None
    text = ls.workspace.get_text_document(uri).source
    return text, offset_at(text, position.line, position.character), rel


def _features(server: CourseServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def on_hover(ls: CourseServer, params: types.HoverParams) -> types.Hover | None:
        at = _at(ls, params.text_document.uri, params.position)
        if at is None or ls.state is None:
            return None
        return hover.hover(ls.state, *at)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded()
    def on_definition(ls: CourseServer, params: types.DefinitionParams) -> types.Location | None:
        at = _at(ls, params.text_document.uri, params.position)
        if at is None or ls.state is None:
            return None
        return definition.definition(ls.state, *at, ls.uris)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[":", "$", "=", "[", "/", ","]),
    )
    @guarded()
    def complete(ls: CourseServer, params: types.CompletionParams) -> types.CompletionList | None:
        at = _at(ls, params.text_document.uri, params.position)
        if at is None or ls.state is None or ls.state.snapshot is None:
            return None
        text, offset, rel = at
        items = completion.complete(
            text, offset, ls.state.snapshot.course, ls.state.chapter_of(rel)
        )
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
        ),
    )
    @guarded()
    def code_action(
        ls: CourseServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        path = _tracked(ls, params.text_document.uri)
        state = ls.state
        if path is None or state is None:
            return None
        if state.snapshot is None:
            state.analyse(formulas=False)
        rel = state.rel(path)
        if rel is None:
            return None
        context = list(params.context.diagnostics)
        return actions.fix_actions(state, rel, context) + actions.notation_actions(
            state, rel, context
        )


def serve(course: Path | None = None) -> None:
    """`coursekit lsp`: serve on stdin/stdout until the client says exit."""
    logging.basicConfig(level=logging.WARNING)  # pygls logs to stderr; stdout is the protocol
    create(course).start_io()
