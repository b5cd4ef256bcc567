"""`trainwatch serve` opened in a real headless Chromium shows the dashboard of seed 004.

The screenshot (the test's artefact) is written to tests/web/artifacts/serve_dashboard.png,
also on failure, and its path is printed (`pytest -s` shows it). textual-serve draws through
xterm.js on a canvas, so the text is read from xterm's own buffer: a script installed before
the page's code keeps a reference to textual-serve's terminal holder when it sets its
`websocket_url`, and the test reads the visible rows from `terminal.buffer.active`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _browser_cdp import BROWSER_ENV, Browser, Page, end_process_group, find_browser
from _serve_helpers import free_port, seed_004_copy, server_stderr, start_serve, wait_for_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
WIDTH, HEIGHT = 1600, 1000
RENDER_TIMEOUT_S = 30.0

KEEP_TERMINAL = """
Object.defineProperty(Object.prototype, "websocket_url", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "websocket_url", {value, writable: true, configurable: true, enumerable: true});
    window.__trainwatchTerminal = this;
  },
});
"""
SCREEN_TEXT = """(() => {
  const holder = window.__trainwatchTerminal;
  const term = holder && holder.terminal;
  if (!term) return null;
  const buffer = term.buffer.active, rows = [];
  for (let i = 0; i < term.rows; i++) {
    const line = buffer.getLine(buffer.viewportY + i);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
})()"""
# What seed 004 puts on the dashboard, formatted as the dashboard formats it (the raw log
# says `23000/ 1000000` and `lm loss 2.133970E+00`): status, progress, the loss chart's legend.
EXPECTED = ("STALLED", "step 23,000 of 1,000,000", "2.3%", "─ loss ─", "rank 0 2.134", "4,096")


async def _render_and_capture(devtools_port: int, url: str, screenshot: Path) -> str:
    page = await Page.open(devtools_port)
    text = ""
    try:
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
        )
        await page.send("Page.enable")  # without it the script below is not installed
        await page.send("Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_TERMINAL})
        await page.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + RENDER_TIMEOUT_S
        while time.monotonic() < deadline:
            text = await page.evaluate(SCREEN_TEXT) or ""
            if all(expected in text for expected in EXPECTED):
                break
            await asyncio.sleep(0.25)
    finally:
        await page.screenshot(screenshot)
        print(f"\nscreenshot: {screenshot}")
        await page.close()
    return text


def test_serve_shows_the_dashboard_in_chromium(tmp_path: Path, record_property: Callable[[str, object], None]) -> None:
    executable = find_browser()
    if executable is None:
        pytest.fail(f"no Chromium: run `make test-deps` (Debian: apt-get install chromium) or set {BROWSER_ENV}")
    log = seed_004_copy(tmp_path / "logs")
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "serve_dashboard.png"
    screenshot.unlink(missing_ok=True)
    record_property("screenshot", str(screenshot))  # lands in --junitxml reports for CI to attach

    server = start_serve([str(log), "--port", str(port)], tmp_path)
    try:
        wait_for_port(port, server, tmp_path)
        with Browser(executable, tmp_path / "chromium-profile", WIDTH, HEIGHT) as browser:
            text = asyncio.run(_render_and_capture(browser.devtools_port, f"http://127.0.0.1:{port}/", screenshot))
    finally:
        end_process_group(server)

    missing = [expected for expected in EXPECTED if expected not in text]
    assert not missing, f"dashboard text lacks {missing}; terminal showed:\n{text}\nserver:\n{server_stderr(tmp_path)}"
    # A real picture of the page: a PNG of the page's size, not an empty capture.
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (WIDTH, HEIGHT)
    assert len(data) > 20_000
