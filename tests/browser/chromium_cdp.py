"""A small client for headless Chromium over the DevTools protocol on a pipe.

`--remote-debugging-pipe` makes Chromium read commands on fd 3 and write replies and events on
fd 4, each a JSON message ended by a NUL byte: no port, no websocket, no extra package. One
browser serves a whole test module; each test opens its own page (a target in flat session mode).

    with Browser.start() as browser:
        page = browser.new_page(1280, 800)
        page.open(Path("dashboard.html"))
        rows = page.evaluate("document.querySelectorAll('tbody tr').length")
        png = page.screenshot()
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

# As root (CI), Chromium needs --no-sandbox; the network flags keep it from calling out, which
# this machine's closed network refuses; a fresh profile makes every run start the same.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--force-device-scale-factor=1",
    "--font-render-hinting=none",
    "--remote-debugging-pipe",
)
TIMEOUT = 30.0


def chromium() -> str | None:
    """The Chromium binary on PATH (Debian's `chromium`), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="coursekit-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Above 4, so that placing them at 3 and 4 in the child cannot clobber one another.
        to_child_r, from_child_w = (_high(fd) for fd in (to_child_r, from_child_w))

        def wire() -> None:  # in the child, before exec: fds 3 and 4 as Chromium expects
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=wire,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    @classmethod
    def start(cls) -> Browser:
        binary = chromium()
        if binary is None:
            raise BrowserError("chromium is not installed")
        browser = cls(binary)
        browser.send("Browser.getVersion")  # fails fast if it did not come up
        return browser

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                self._write({"id": self._id(), "method": "Browser.close"})
                self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            for fd in (self._to_child, self._from_child):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self.profile, ignore_errors=True)

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_child, data) :]

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from chromium in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError(f"chromium exited ({self.process.poll()})")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        ident = self._id()
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._write(message)
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") != ident:
                if "method" in reply:
                    self._events.append(reply)
                continue
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error'].get('message')}")
            return reply.get("result", {})

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for event in self._events:
                if event["method"] == method and event.get("sessionId") == session:
                    self._events.remove(event)
                    return event
            self._events.append(self._read(deadline))

    def new_page(self, width: int = 1280, height: int = 800) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, attached["sessionId"], target)
        page.send("Page.enable")
        page.resize(width, height)
        return page


class Page:
    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self.browser = browser
        self.session = session
        self.target = target
        self.width = 0

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.browser.send(method, params, self.session)

    def resize(self, width: int, height: int) -> None:
        self.width = width
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.send("Emulation.setDeviceMetricsOverride", metrics)

    def open(self, path: Path) -> None:
        self.send("Page.navigate", {"url": path.resolve().as_uri()})
        self.browser.wait_event("Page.loadEventFired", self.session)

    def media(self, scheme: str = "light", media: str = "screen") -> None:
        """Emulate `prefers-color-scheme` and the media type (screen or print)."""
        features = [{"name": "prefers-color-scheme", "value": scheme}]
        self.send("Emulation.setEmulatedMedia", {"media": media, "features": features})

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or str(details))
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        """A PNG of the whole page at the current width."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.resize(self.width, height)
        shot = self.send("Page.captureScreenshot", {"format": "png"})
        return base64.b64decode(shot["data"])

    def pdf(self) -> bytes:
        return base64.b64decode(self.send("Page.printToPDF", {"printBackground": True})["data"])

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})
