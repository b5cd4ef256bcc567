"""Helpers for the dashboard's pilot tests: wait for a condition, read widget text, a dashboard on a
frozen clock, seed logs read by the real Pipeline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import seed
from textual.pilot import Pilot
from textual.widgets import DataTable

from trainwatch.pipeline import Pipeline
from trainwatch.store.store import Store
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
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


def frozen(store: Store) -> TrainwatchApp:
    """The dashboard on `store` with the clock stopped and the timers an hour apart: a test ticks it."""
    return TrainwatchApp(
        store=store, clock=FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0), fast_interval=3600.0, slow_interval=3600.0
    )


def read(*paths: Path) -> Store:
    """The store after the real Pipeline read `paths` to the end."""
    pipeline = Pipeline([str(p) for p in paths])
    pipeline.read_to_end()
    return pipeline.store


def seed004_head(upto_iteration: int) -> str:
    """Seed 004 through the `time (ms)` line after ` iteration N/`."""
    lines = seed("004").read_text(encoding="utf-8").splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith(f" iteration {upto_iteration:>8}/")) + 2
    return "".join(lines[:end])


def row_texts(table: DataTable) -> list[list[str]]:  # type: ignore[type-arg]
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
