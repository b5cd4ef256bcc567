"""A step seen arriving live is recent, whatever the log's own clock says (demo, replays)."""

from __future__ import annotations

import time

from trainwatch.diagnosis.status import run_status
from trainwatch.records import Step
from trainwatch.store import Store


def _replayed_store(caught_up_before_steps: bool) -> Store:
    store = Store()
    state = store.source("replay.log")
    if caught_up_before_steps:
        state.caught_up_monotonic = time.monotonic() - 1.0
    # seed 004, iterations 5..25: log timestamps from 2020, replayed now
    steps = [(5, 1.1962), (10, 0.9305), (15, 0.9282), (20, 0.9411), (25, 0.9296)]
    for n, (step, step_time) in enumerate(steps):
        store.add(
            Step("replay.log", 0, step, f"2020-12-12T00:00:{n * 5:02d}.000", 345 + n * 8, {"step_time_s": step_time})
        )
    if not caught_up_before_steps:
        state.caught_up_monotonic = time.monotonic() + 1.0
    state.mtime = time.time()
    return store


def test_steps_arriving_while_following_mean_running() -> None:
    assert run_status(_replayed_store(caught_up_before_steps=True)).state == "running"


def test_the_same_old_steps_read_as_history_mean_stalled() -> None:
    assert run_status(_replayed_store(caught_up_before_steps=False)).state == "stalled"
