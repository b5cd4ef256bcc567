"""The header's "last write" is when the file was written (its mtime), not when trainwatch read it: a log
from 2020 opened now must not read "last write: 9s ago" next to "nothing written for 5.9 years". The age
follows the clock every second, between two judgements; the step is printed once.

Data: transcribed seed-004 records (_ui_records.py) on a frozen clock.
"""

from __future__ import annotations

import re

from _ui_helpers import header_text
from _ui_records import build_store

from trainwatch.diagnosis.clock import fmt_age
from trainwatch.diagnosis.judge import Judgement
from trainwatch.diagnosis.status import RunStatus
from trainwatch.store.store import SourceState
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.widgets.header import source_line, sources_shown, sources_text


def test_last_write_is_the_files_mtime_not_the_read_time() -> None:
    now = 1_000_000.0
    state = SourceState("logs/out.log")
    state.mtime = now - 3 * 3600  # written three hours ago
    state.last_data_wall = now - 9  # read by us nine seconds ago
    text = source_line([state], now, [0]).plain
    assert "last write: 3.0h ago" in text, text


def test_stdin_has_no_mtime_so_arrival_time_counts() -> None:
    now = 1_000_000.0
    state = SourceState("-")
    state.last_data_wall = now - 9
    text = source_line([state], now, [0]).plain
    assert "last write: 9s ago" in text, text


async def test_header_prints_the_step_once_and_ages_it_every_second() -> None:
    clock = FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0)
    store = build_store(events=False)
    for st in store.sources.values():
        st.mtime = clock.wall_s - 20  # the one clock: ages are since the file was written
    app = TrainwatchApp(store=store, clock=clock, fast_interval=3600.0, slow_interval=3600.0)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.fast_tick()
        app.dashboard.slow_tick()
        first = header_text(app).splitlines()[0]
        assert len(re.findall(r"(?<!last )\bstep \d", first)) == 1, first  # `step 23,000 of 1,000,000` only
        assert "23,000 of 1,000,000" in first and "1000000" not in first
        age = re.search(r"last write (\S+) ago", first)
        assert age is not None and age.group(1) == "20s", first
        clock.wall_s += 7  # less than the 5 s re-judgement would show twice; the age follows the clock
        app.dashboard.clock_tick()
        second = header_text(app).splitlines()[0]
        new_age = re.search(r"last write (\S+) ago", second)
        assert new_age is not None and new_age.group(1) == "25s", (first, second)  # 27 s, in steps of 5 s
        clock.wall_s += 40
        app.dashboard.clock_tick()
        assert "last write 1m ago" in header_text(app).splitlines()[0]


def test_an_age_is_floored_to_the_second_then_to_5_s_then_to_the_minute() -> None:
    assert [fmt_age(s) for s in (0.4, 1.0, 9.9, 10.0, 14.9, 15.0, 59.9, 60.0, 179.0)] == [
        "now", "1s ago", "9s ago", "10s ago", "10s ago", "15s ago", "55s ago", "1m ago", "2m ago",
    ]  # fmt: skip


def test_the_header_ages_the_judged_write_on_its_own_clock() -> None:
    # (what the header shows of a verdict, its cause: tests/diagnosis/test_progress_and_cause.py)
    status = RunStatus("running", "", (), write_age_s=3.0)
    assert Judgement(status, (), 100.0).age_at(104.0) == 7.0


def test_sources_line_names_only_a_file_that_stopped_when_the_progress_line_has_the_age() -> None:
    """The progress line prints the last write's age; the sources line below it does not repeat
    it, and names the oldest file only when it was written longer ago (a rank that stopped)."""
    now = 1_000_000.0
    fresh, stopped = SourceState("logs/rank_0.log"), SourceState("logs/rank_1.log")
    fresh.mtime, stopped.mtime = now - 5, now - 40
    shown = sources_shown([fresh, stopped], [0, 1])
    alone = sources_text(shown, now).plain
    assert "last write: 5s ago (oldest 40s ago: logs/rank_1.log)" in alone, alone
    below = sources_text(shown, now, newest_elsewhere=True).plain
    assert "last write" not in below and "oldest write: 40s ago (logs/rank_1.log)" in below, below
    stopped.mtime = now - 5  # written together: nothing to single out
    together = sources_text(sources_shown([fresh, stopped], [0, 1]), now + 30, newest_elsewhere=True).plain
    assert "write" not in together, together
