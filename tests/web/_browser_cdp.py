"""Headless Chromium driven over the DevTools protocol, for the `trainwatch serve` browser test.

No browser-automation package: Playwright and Puppeteer want to download their own browser,
which this kind of machine cannot. Chromium's DevTools protocol is JSON over a websocket, and
aiohttp (a textual-serve dependency, so present with the `[web]`/`dev` extras) speaks websockets.
Every process started here is in its own session so `close()` can end it with its children.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

BROWSER_ENV = "TRAINWATCH_CHROMIUM"
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# The machine's network is closed: without the background-networking flags Chromium keeps
# trying (and failing) to reach Google's hosts. --no-sandbox because CI runs as root.
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


def find_browser() -> str | None:
    """Chromium's path: $TRAINWATCH_CHROMIUM, else the first Chromium-like name on PATH."""
    explicit = os.environ.get(BROWSER_ENV)
    if explicit:
        return explicit
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def end_process_group(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM the process's group (it was started with start_new_session), SIGKILL if it lingers."""
    if proc.poll() is not None:
        _kill_group(proc.pid, signal.SIGKILL)  # the leader is gone; children may not be
        return
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _kill_group(proc.pid, signal.SIGKILL)
    proc.wait(timeout=grace_s)


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Browser:
    """One headless Chromium with a fresh profile; `devtools_port` once started."""

    def __init__(self, executable: str, profile_dir: Path, width: int, height: int) -> None:
        self.executable = executable
        self.profile_dir = profile_dir
        self.size = (width, height)
        self.proc: subprocess.Popen[bytes] | None = None
        self.devtools_port = 0
        self.log_path = profile_dir.parent / "chromium.log"

    def start(self, timeout_s: float = 20.0) -> None:
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        width, height = self.size
        args = [
            self.executable,
            *HEADLESS_FLAGS,
            f"--user-data-dir={self.profile_dir}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        # With --remote-debugging-port=0 Chromium picks a free port and writes it here.
        port_file = self.profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}: {self.log_tail()}")
            lines = port_file.read_text().splitlines() if port_file.exists() else []
            if lines and lines[0].isdigit():
                self.devtools_port = int(lines[0])
                return
            time.sleep(0.1)
        raise RuntimeError(f"chromium wrote no DevToolsActivePort in {timeout_s:.0f}s: {self.log_tail()}")

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def close(self) -> None:
        if self.proc is not None:
            end_process_group(self.proc)
            self.proc = None

    def __enter__(self) -> Browser:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Page:
    """A DevTools session on the browser's first page target."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._session = session
        self._ws = ws
        self._ids = itertools.count(1)

    @classmethod
    async def open(cls, devtools_port: int) -> Page:
        session = aiohttp.ClientSession()
        try:
            async with session.get(f"http://127.0.0.1:{devtools_port}/json/list") as response:
                targets = await response.json(content_type=None)
            page = next(t for t in targets if t.get("type") == "page")
            ws = await session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        except BaseException:
            await session.close()
            raise
        return cls(session, ws)

    async def send(self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 15.0) -> Any:
        """Call one DevTools method and return its result (events in between are ignored)."""
        call_id = next(self._ids)
        await self._ws.send_str(json.dumps({"id": call_id, "method": method, "params": params or {}}))
        return await asyncio.wait_for(self._reply(call_id, method), timeout_s)

    async def _reply(self, call_id: int, method: str) -> Any:
        while True:
            message = await self._ws.receive()
            if message.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"DevTools connection ended during {method}: {message.type!r}")
            data = json.loads(message.data)
            if data.get("id") != call_id:
                continue
            if "error" in data:
                raise RuntimeError(f"{method}: {data['error']}")
            return data.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> Path:
        result = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(result["data"]))
        return path

    async def close(self) -> None:
        await self._ws.close()
        await self._session.close()
