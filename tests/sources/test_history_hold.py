"""The dashboard draws the tail windows before the history is read: its pipeline holds the history
(`hold_history`) until the screen shows the present (`release_history`), or HISTORY_HOLD_MAX_S at
most. Read at once, the history's catch-up took the GIL from the UI's start: the present appeared
after 5-7 s instead of 1.5 s, one start in two (`make bench`, 1 GB log)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import seed
from trainwatch import pipeline as pipeline_module
from trainwatch.pipeline import Pipeline

WINDOW = 64 * 1024


def _wait(what: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.02)
    return False


def _started(tmp_path: Path) -> Pipeline:
    log = tmp_path / "gpt2.log"
    log.write_bytes(seed("004").read_bytes())
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    pipeline.hold_history()
    pipeline.start()
    return pipeline


def test_the_history_waits_for_the_screen_then_is_read(tmp_path: Path) -> None:
    pipeline = _started(tmp_path)
    try:
        assert _wait(lambda: 23000 in pipeline.store.latest_step.values())  # the window: the present
        version = pipeline.store.version
        assert _wait(lambda: pipeline.history_waits(pipeline.store.version))
        time.sleep(0.5)
        assert pipeline.backfilling and pipeline.history_waits(version)  # held: nothing of the history read
        assert min(pipeline.store.latest_step.values()) > 20000
        pipeline.release_history()  # what the dashboard does once it drew them
        assert _wait(lambda: not pipeline.backfilling)
        assert pipeline.store.step_records  # the whole run now
        assert not pipeline.history_waits(pipeline.store.version)
    finally:
        pipeline.stop()


def test_the_history_is_read_anyway_when_nobody_releases_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_module, "HISTORY_HOLD_MAX_S", 0.3)
    pipeline = _started(tmp_path)
    try:
        assert _wait(lambda: not pipeline.backfilling, timeout=30.0)
    finally:
        pipeline.stop()


def test_without_a_hold_the_history_follows_the_windows(tmp_path: Path) -> None:
    log = tmp_path / "gpt2.log"
    log.write_bytes(seed("004").read_bytes())
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    pipeline.start()
    try:
        assert _wait(lambda: not pipeline.backfilling)
        assert not pipeline.history_waits(pipeline.store.version)
    finally:
        pipeline.stop()


async def test_the_dashboard_releases_the_history_once_it_drew_the_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainwatch.ui.app import TrainwatchApp

    monkeypatch.setattr(pipeline_module, "HISTORY_HOLD_MAX_S", 600.0)  # only the dashboard can let it go
    log = tmp_path / "gpt2.log"
    log.write_bytes(seed("004").read_bytes())
    pipeline = Pipeline([str(log)], force_poll=True, poll_interval=0.05, window_bytes=WINDOW)
    app = TrainwatchApp(pipeline=pipeline)
    async with app.run_test(size=(160, 45)) as pilot:
        deadline = time.monotonic() + 60
        while pipeline.backfilling and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert not pipeline.backfilling  # the whole run read behind the window, released by the screen
        assert min(pipeline.store.latest_step.values()) == 23000
