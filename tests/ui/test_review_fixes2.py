"""Defects found by a second user review of the dashboard, each checked the way the reviewer saw it.

Logs: seed 004 (DeepSpeed + Megatron GPT-2, /work/shared/seeds/004_*) read by the real Pipeline —
its head through iteration 200 followed by its head again through iteration 150 is a relaunch of
the same run into the same file; sample_logs/lightning__cpu_simple_profiler_slow_dataset.log
(Lightning SimpleProfiler report); transcribed seed-004 records (_ui_records.py) for the charts.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from _ui_helpers import wait_for
from _ui_records import RAW_LINES, SOURCE, build_store
from conftest import SAMPLES, seed
from textual.widgets import Log, TabbedContent

from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.store.series import Series
from trainwatch.store.store import SourceState, Store
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.data import chart_traces, restart_index, series_restart
from trainwatch.ui.widgets.chart import Chart, legend
from trainwatch.ui.widgets.profiler import ProfileTable
from trainwatch.ui.widgets.rawlog import LogPane

LIGHTNING = SAMPLES / "lightning__cpu_simple_profiler_slow_dataset.log"


def frozen(store: Store) -> TrainwatchApp:
    return TrainwatchApp(
        store=store, clock=FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0), fast_interval=3600.0, slow_interval=3600.0
    )


def seed_head(upto_iteration: int) -> str:
    """Seed 004 through the `time (ms)` line after ` iteration N/`."""
    lines = seed("004").read_text(encoding="utf-8").splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith(f" iteration {upto_iteration:>8}/")) + 2
    return "".join(lines[:end])


def relaunched(tmp_path: Path) -> Store:
    """Seed 004 to iteration 200, then the same run launched again into the file, to iteration 150."""
    path = tmp_path / "out.log"
    path.write_text(seed_head(200) + seed_head(150), encoding="utf-8")
    pipeline = Pipeline([str(path)])
    pipeline.read_to_end()
    return pipeline.store


# ------------------------------------------------------------------ 1. charts fit after a resize
def assert_fits(chart: Chart) -> None:
    w, h = chart.content_size.width, chart.content_size.height
    lines = chart.render().plain.split("\n")
    assert len(lines) <= h, (chart.metric, len(lines), h)
    plot = lines[:-1]  # the legend is the last line (cut with an ellipsis when long)
    widest = max(len(line) for line in plot)
    assert widest <= w, (chart.metric, widest, w)  # wider than the panel: every line wraps
    assert widest >= w - 2, (chart.metric, widest, w)  # not a small plot in a big panel


async def test_charts_fit_the_panel_after_shrinking_and_growing_the_terminal() -> None:
    app = frozen(build_store(ranks=2, events=False))
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        app.dashboard.slow_tick()
        await pilot.pause()
        shown = [c for c in app.query(Chart) if c.display]
        assert len(shown) >= 2
        for chart in shown:
            assert_fits(chart)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        shown = [c for c in app.query(Chart) if c.display]
        assert shown
        for chart in shown:
            assert chart.content_size.width < 80
            assert_fits(chart)
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        await pilot.pause()
        shown = [c for c in app.query(Chart) if c.display]
        assert len(shown) >= 2
        for chart in shown:
            assert chart.content_size.width > 40
            assert_fits(chart)


# ------------------------------------------------------------------ 2. a relaunch into the same file
def test_relaunch_charts_the_current_attempt_only(tmp_path: Path) -> None:
    store = relaunched(tmp_path)
    (trace,), used_time = chart_traces(store, "loss", last_n=None, wall_time=False)
    assert not used_time
    steps = list(trace.xs)
    assert steps[0] == 5 and steps[-1] == 150 and len(steps) == 30  # 5, 10, ... 150: no line back to step 5
    assert steps == sorted(steps)
    assert trace.restart_step == 5
    # seed 004 line 551, `iteration 150`: `lm loss 9.136598E+00` (the relaunch prints the same numbers)
    assert abs(trace.ys[-1] - 9.136598) < 1e-9
    text = legend([trace], "loss", 0.9).plain
    assert "since restart at step 5" in text and "EMA 0.9" in text
    # zoom: the last points of the current attempt, still labelled
    (zoomed,), _ = chart_traces(store, "loss", last_n=10, wall_time=False)
    assert list(zoomed.xs) == steps[-10:] and zoomed.restart_step == 5


def test_no_restart_no_note(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_text(seed_head(200), encoding="utf-8")
    pipeline = Pipeline([str(path)])
    pipeline.read_to_end()
    (trace,), _ = chart_traces(pipeline.store, "loss", last_n=None, wall_time=False)
    assert (trace.xs[0], trace.xs[-1], len(trace.xs)) == (5, 200, 40)
    assert trace.restart_step is None
    assert "restart" not in legend([trace], "loss", 0.9).plain


def test_relaunch_on_the_wall_time_axis_splits_by_step() -> None:
    # The seed-004 shape (steps 5..200 then 5..150) with one log timestamp per step; the
    # second launch's clock goes on from the first one's, and its records are attempt 1 (as
    # the runner numbers a relaunch into the same file).
    store = Store()
    records = []
    t = 0
    for attempt, last in enumerate((200, 150)):
        for step in range(5, last + 1, 5):
            t += 1
            stamp = f"2020-12-12T05:{t // 60:02d}:{t % 60:02d}"
            records.append(Step(SOURCE, 0, step, stamp, t, {"loss": 11.0 - step / 100}, attempt=attempt))
    store.add_many(records)
    (trace,), used_time = chart_traces(store, "loss", last_n=None, wall_time=True)
    assert used_time
    assert len(trace.xs) == 30 and trace.restart_step == 5
    assert list(trace.xs) == sorted(trace.xs) and trace.xs[-1] - trace.xs[0] == 29.0  # 30 steps, 1 s apart


def test_a_step_counter_going_back_in_one_attempt_is_no_restart() -> None:
    # per-epoch step counters (1..100 each epoch) go back without a relaunch: the records stay
    # attempt 0, and the chart keeps every epoch
    store = Store()
    store.add_many([Step(SOURCE, 0, step, None, i, {"loss": 1.0}) for i, step in enumerate([*range(1, 101)] * 2)])
    (trace,), _ = chart_traces(store, "loss", last_n=None, wall_time=False)
    assert len(trace.xs) == 200 and trace.restart_step is None


def test_restart_index_finds_the_last_step_going_back() -> None:
    steps = array("d", range(10_000)) + array("d", range(5, 9_000)) + array("d", range(7, 20))
    assert restart_index(steps) == 10_000 + 8_995
    assert restart_index(array("d", range(10_000)) + array("d", range(5, 9_000))) == 10_000
    assert restart_index(array("d", range(10_000))) == 0
    assert restart_index(array("d", [1, 2, 3, 2, 3, 4])) == 0  # back by one: not a relaunch
    assert restart_index(array("d")) == 0


def test_series_restart_follows_a_growing_series() -> None:
    s = Series(capacity=256)
    for step in range(5, 201, 5):
        s.append(step, 1.0)
    assert series_restart(s) == 0
    s.append(5, 1.0)  # the relaunch's first step, seen on the next redraw
    assert series_restart(s) == 40
    for step in range(10, 151, 5):
        s.append(step, 1.0)
    assert series_restart(s) == 40
    for step in range(155, 2000, 5):  # past the capacity: compacted, searched again
        s.append(step, 1.0)
    assert s.compactions and series_restart(s) == restart_index(s.steps) > 0


async def test_relaunch_chart_legend_on_screen(tmp_path: Path) -> None:
    app = frozen(relaunched(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        app.dashboard.slow_tick()
        await pilot.pause()
        loss = next(c for c in app.query(Chart) if c.metric == "loss")
        text = loss.render().plain
        assert "since restart at step 5" in text
        assert "200" not in text.split("\n")[-2]  # the x ticks end at the current attempt's 150


# ------------------------------------------------------------------ 3. Enter on an event after a truncation
def truncated_store() -> Store:
    """The ring after `file truncated`: seed 004 lines 353-354 of the old file, the marker, then
    the relaunched run's lines with the same numbers."""
    store = build_store(events=False)
    with store.lock:
        state = store.sources.setdefault(SOURCE, SourceState(SOURCE))
        state.recent.clear()
        state.recent.extend(RAW_LINES)
        state.recent.append((0, "── file truncated at 2821 bytes: following from the start ──"))
        state.recent.extend(RAW_LINES)
    return store


async def test_jump_after_truncation_marks_the_current_copy_only() -> None:
    app = frozen(truncated_store())
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        pane = app.query_one(LogPane)
        app.action_tab("log")
        pane.jump(SOURCE, 353)
        await pilot.pause()
        lines = list(pane.query_one(Log).lines)
        marker = next(i for i, line in enumerate(lines) if "file truncated" in line)
        marked = [i for i, line in enumerate(lines) if line.startswith("▶")]
        assert len(marked) == 1, lines
        assert marked[0] > marker and lines[marked[0]].startswith("▶    353 │  iteration       10/")
        assert app.query_one(TabbedContent).active == "log" and not pane.following


# ------------------------------------------------------------------ 4. `o` sorts as soon as the tab is shown
async def test_profiler_tab_key_focuses_its_table_and_o_sorts() -> None:
    pipeline = Pipeline([str(LIGHTNING)])
    pipeline.read_to_end()
    app = frozen(pipeline.store)
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()
        table = app.query(ProfileTable).first()
        assert app.focused is table
        before = [table.get_row_at(i)[0].plain for i in range(table.row_count)]
        await pilot.press("o")
        await pilot.pause()
        after = [table.get_row_at(i)[0].plain for i in range(table.row_count)]
        assert sorted(after) == sorted(before) and after != before
        assert await wait_for(pilot, lambda: table.sort_index == 2)  # share -> mean duration
