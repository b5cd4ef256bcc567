"""A run relaunched into the same file: the charts show the current attempt only and say "since restart
at step N"; a step counter going back within one attempt (per-epoch steps) is no restart.

Log: seed 004 (DeepSpeed + Megatron GPT-2, /work/shared/seeds/004_*) read by the real Pipeline — its head
through iteration 200 followed by its head again through iteration 150 is a relaunch of the same run.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from _ui_helpers import frozen, read, seed004_head
from _ui_records import SOURCE

from trainwatch.records import Step
from trainwatch.store.series import Series
from trainwatch.store.store import Store
from trainwatch.ui.data import chart_traces, restart_index, series_restart
from trainwatch.ui.widgets.chart import Chart, legend


def relaunched(tmp_path: Path) -> Store:
    """Seed 004 to iteration 200, then the same run launched again into the file, to iteration 150."""
    path = tmp_path / "out.log"
    path.write_text(seed004_head(200) + seed004_head(150), encoding="utf-8")
    return read(path)


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
    path.write_text(seed004_head(200), encoding="utf-8")
    (trace,), _ = chart_traces(read(path), "loss", last_n=None, wall_time=False)
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
