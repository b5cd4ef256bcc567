"""Snapshots of the main screens at 80x24 and 160x45 (pytest-textual-snapshot).

The store is built from transcribed seed-004 records (_ui_records.py) and the clock is frozen,
so ages and ETAs are the same on every run. Update with `pytest tests/ui --snapshot-update`
after checking the SVGs by eye."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _ui_records import build_store
from conftest import seed
from textual.pilot import Pilot

from trainwatch.pipeline import Pipeline
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock

# 2020-12-12 05:58:34 local-ish: a few seconds after seed 004's last timestamp.
NOW = 1_607_752_720.0


def app(ranks: int = 1) -> TrainwatchApp:
    store = build_store(ranks=ranks)
    for st in store.sources.values():
        st.mtime = NOW - 4  # written 4 s ago: every age on screen is since then (one clock)
    return TrainwatchApp(
        store=store,
        clock=FrozenClock(wall_s=NOW, mono_s=0.0),
        fast_interval=3600.0,  # ticks are driven by the test, not by time
        slow_interval=3600.0,
    )


async def settle(pilot: Pilot[None]) -> None:
    await pilot.pause()
    a = pilot.app
    assert isinstance(a, TrainwatchApp)
    a.dashboard.fast_tick()
    a.dashboard.slow_tick()
    await pilot.pause()


def test_overview_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(), terminal_size=(80, 24), run_before=settle)


def test_overview_160x45(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(ranks=4), terminal_size=(160, 45), run_before=settle)


def test_ranks_160x45(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(ranks=8), terminal_size=(160, 45), press=["2"], run_before=settle)


def test_events_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(), terminal_size=(80, 24), press=["3"], run_before=settle)


def test_log_160x45(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(), terminal_size=(160, 45), press=["4"], run_before=settle)


def test_help_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(), terminal_size=(80, 24), press=["question_mark"], run_before=settle)


def profiled_app() -> TrainwatchApp:
    """Seed 004's records plus the seed 000 (Lightning) and 001 (torch.profiler) tables, read by the
    real parsers and renamed to a fixed source so the snapshot does not depend on the checkout."""
    a = app()
    parsed = Pipeline([str(seed("000")), str(seed("001"))])
    parsed.read_to_end()
    a.store.add_many([replace(p, source="logs/profile.log") for p in parsed.store.profiles])
    return a


def test_phases_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(), terminal_size=(80, 24), press=["6"], run_before=settle)


@pytest.mark.slow  # over 2 s
def test_phases_160x45(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app(ranks=4), terminal_size=(160, 45), press=["6", "right_square_bracket"], run_before=settle)


def test_profiler_160x45(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(profiled_app(), terminal_size=(160, 45), press=["5"], run_before=settle)
