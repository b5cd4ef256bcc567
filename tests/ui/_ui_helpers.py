"""Helpers for the dashboard's pilot tests: wait for a condition, read widget text."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.header import RunHeader


async def wait_for(pilot: Pilot[None], cond: Callable[[], bool], tries: int = 80) -> bool:
    """Let the app run until cond() holds (no wall-clock assertion: a bounded number of pauses)."""
    for _ in range(tries):
        if cond():
            return True
        await pilot.pause(0.1)
    return cond()


def header_text(app: TrainwatchApp) -> str:
    header = app.query_one(RunHeader)
    last = getattr(header, "_last", None)
    return last.plain if last is not None else ""
