"""A headless Chromium driven over the Chrome DevTools Protocol, for the HTML report tests.

Nothing is installed or downloaded here: the browser is whatever ``chromium``
(Debian's package; ``.ci/run`` installs it), ``chromium-browser`` or
``google-chrome`` is on PATH, and the tests skip with that reason when none
is. Chromium is started with ``--remote-debugging-port=0``; the port it
chose is read from ``DevToolsActivePort`` in its user-data-dir, a page
target is created over the browser socket, and the page is driven over its
own socket with the ``websockets`` package (a test extra). The fixtures end
the browser they started by its pid.

* ``chromium`` (session): a :class:`Browser`;
* ``page``: a fresh :class:`Page` (tab) per test, with console errors
  collected from ``Runtime.consoleAPICalled``, ``Runtime.exceptionThrown``
  and ``Log.entryAdded``.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0")
START_TIMEOUT_S = 30.0
COMMAND_TIMEOUT_S = 30.0


class Page:
    """One tab: send a CDP command and wait for its answer, keeping the events that arrive meanwhile."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self._stack = contextlib.ExitStack()
        self.socket = self._stack.enter_context(connect(url, max_size=64 * 1024 * 1024,
                                                        open_timeout=COMMAND_TIMEOUT_S))
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = COMMAND_TIMEOUT_S) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("method") == method:
                return message
            if "method" in message:
                self.events.append(message)

    def open(self, path: Path) -> None:
        self.send("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element (scrolled into view first)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center', inline: 'center'});"
            " const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"
        )
        assert box is not None, f"nothing matches {selector}"
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"], button="left", clickCount=1)

    def console_errors(self) -> list[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append("console." + params["type"] + ": "
                              + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        return errors

    def screenshot(self, path: Path, *, clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self._stack.close()


class Browser:
    def __init__(self, binary: str, profile: Path) -> None:
        self.profile = profile
        # Chromium logs a lot on stderr: a file, not a pipe nobody drains.
        self.log = (profile.parent / f"{profile.name}-stderr.log").open("wb")
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
        )
        self.port, self.browser_path = self._wait_for_port()

    def _wait_for_port(self) -> tuple[int, str]:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.flush()
                stderr = Path(self.log.name).read_text("utf-8", "replace")
                raise RuntimeError(f"chromium exited with {self.proc.returncode}: {stderr[-2000:]}")
            if marker.exists():
                lines = marker.read_text().split()
                if len(lines) >= 2:
                    return int(lines[0]), lines[1]
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port in time")

    def new_page(self, width: int = 1400, height: int = 1000) -> Page:
        browser = Page(f"ws://127.0.0.1:{self.port}{self.browser_path}")
        try:
            target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        finally:
            browser.close()
        page = Page(f"ws://127.0.0.1:{self.port}/devtools/page/{target}")
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            page.send(domain)
        page.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        page.target = target  # type: ignore[attr-defined]
        return page

    def close_page(self, page: Page) -> None:
        page.close()
        browser = Page(f"ws://127.0.0.1:{self.port}{self.browser_path}")
        try:
            browser.send("Target.closeTarget", targetId=page.target)  # type: ignore[attr-defined]
        finally:
            browser.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


def find_chromium() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium on PATH (chromium, chromium-browser or google-chrome): "
                    "install Debian's `chromium` package, as .ci/run does")
    pytest.importorskip("websockets", reason="the browser tests drive Chromium with `websockets` (pip install -e '.[test]')")
    browser = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser
    finally:
        browser.stop()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    tab = chromium.new_page()
    try:
        yield tab
    finally:
        chromium.close_page(tab)
