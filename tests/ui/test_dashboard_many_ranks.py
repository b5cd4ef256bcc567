"""A 32-node job: hundreds of per-rank files. Charts draw the ranks as one band (min/max and the
mean over every rank) plus the two ranks furthest out, labels say `rank 7` rather than the
file's path, and ranks are listed in numeric order (rank_2 before rank_10)."""

from __future__ import annotations

import math
import random
import time
from array import array
from bisect import bisect_right
from pathlib import Path

import pytest
from _ui_helpers import wait_for

from trainwatch.store.store import RankKey
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.data import MAX_RANK_LINES, Trace, band_outliers, needs_source, rank_band
from trainwatch.ui.data.labels import rank_label
from trainwatch.ui.redraw import CHARTS, PACE_MAX_S, REDRAW_SHARE, RedrawScheduler
from trainwatch.ui.widgets.chart import Chart, ChartOptions, legend, render_chart
from trainwatch.ui.widgets.ranks import RanksTable

# Megatron-LM's iteration line, as in /work/shared/seeds/004
LINE = (
    " iteration {:8d}/ {:8d} | elapsed time per iteration (ms): {:.1f} | learning rate 1.000E-04 |"
    " lm loss {:.6E} | loss scale 4096.0 |\n"
)


def trace(rank: int, rng: random.Random, n: int, nan_every: int = 0) -> Trace:
    xs = array("d", sorted(rng.sample(range(10 * n), n)))
    ys = array("d", (rng.uniform(0, 10) for _ in range(n)))
    if nan_every:
        for i in range(0, n, nan_every):
            ys[i] = math.nan
    return Trace(f"rank {rank}", xs, ys)


def test_band_is_min_max_and_mean_of_every_rank_per_column() -> None:
    rng = random.Random(7)
    traces = [trace(r, rng, rng.randint(1, 300), nan_every=r % 4) for r in range(40)]
    columns = 30
    band = rank_band(traces, columns)
    lo = min(t.xs[0] for t in traces)
    hi = max(t.xs[-1] for t in traces)
    bounds = [lo + (hi - lo) * c / columns for c in range(1, columns)]
    cells: dict[int, list[float]] = {}
    for t in traces:
        for x, y in zip(t.xs, t.ys, strict=True):
            if not math.isnan(y):
                cells.setdefault(bisect_right(bounds, x), []).append(y)
    assert len(band.xs) == len(cells)
    for x, low, high, mean, count in zip(band.xs, band.low, band.high, band.mean, band.counts, strict=True):
        ys = cells[min(columns - 1, int((x - lo) / (hi - lo) * columns))]
        assert (low, high, count) == (min(ys), max(ys), len(ys))
        assert mean == sum(ys) / len(ys) or math.isclose(mean, sum(ys) / len(ys), rel_tol=1e-12)


def test_band_of_times_out_of_order_puts_each_point_in_its_column() -> None:
    # a rank whose wall clock jumped back, logging only near x = 91..99 of a 0..499 axis: its
    # (large) values belong in the columns of those x, not smeared over the whole width
    late = Trace("rank 0", array("d", [95, 91, 99, 93]), array("d", [1001, 1009, 1004, 1002]))
    steady = Trace("rank 1", array("d", range(500)), array("d", [5.0] * 500))
    band = rank_band([late, steady], 10)
    assert sum(band.counts) == 504
    for x, high in zip(band.xs, band.high, strict=True):
        holds_late = 50 <= x < 100  # the column of x 49.9..99.8
        assert (high > 1000) == holds_late


def test_many_ranks_draw_as_a_band_with_the_outermost_ranks() -> None:
    rng = random.Random(3)
    n = 64
    traces = [
        Trace(
            f"rank {r}",
            array("d", range(500)),
            array("d", (0.9 + 0.001 * r + rng.uniform(0, 1e-4) for _ in range(500))),
        )
        for r in range(n)
    ]
    text = legend(traces, "step_time_s", 0.0).plain
    assert f"mean of {n} ranks" in text
    assert "rank 63 (highest now)" in text and "rank 0 (lowest now)" in text
    assert [t.label for _why, t in band_outliers(traces)] == ["rank 63", "rank 0"]
    plot = render_chart(traces, 80, 16, name="step_time_s", options=ChartOptions()).plain
    assert "cannot draw" not in plot
    assert any(0x2800 < ord(c) <= 0x28FF for c in plot)  # braille: lines were drawn


def test_identical_ranks_draw_one_constant_band() -> None:
    # every rank prints the same step time (synchronous training): no outliers, one tick at the value
    traces = [Trace(f"rank {r}", array("d", range(300)), array("d", [0.9] * 300)) for r in range(MAX_RANK_LINES + 1)]
    assert band_outliers(traces) == []
    plot = render_chart(traces, 60, 10, name="step_time_s", options=ChartOptions()).plain
    assert "0.9┤" in plot


def test_rank_labels_name_the_file_only_when_ranks_repeat() -> None:
    per_rank = [RankKey(f"/logs/rank_{r}.log", r) for r in range(4)]
    assert not needs_source(per_rank, False)
    two_runs = [RankKey("/a/out.log", 0), RankKey("/b/out.log", 0)]
    assert needs_source(two_runs, False)
    assert needs_source([RankKey("/a.log", None), RankKey("/b.log", 1)], False)


def test_a_log_that_names_no_rank_is_labelled_by_its_file_not_rank_question_mark() -> None:
    """A single-process loop's legends and Ranks tab said `rank ?` on every run."""
    assert rank_label(RankKey("/runs/exp1/train.log", None), False) == "train.log"
    assert rank_label(RankKey("/runs/exp1/train.log", None, "node7"), False, True) == "node7/train.log"
    # two sources: their paths' tails, which tell apart two `train.log`s
    a, b = RankKey("/runs/exp1/train.log", None), RankKey("/runs/exp2/train.log", None)
    assert needs_source([a, b], False)
    assert rank_label(a, True) != rank_label(b, True)
    assert rank_label(RankKey("/runs/exp1/train.log", 3), False) == "rank 3"


async def test_an_unranked_logs_legend_names_its_file(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}: loss {5.0 / i:.4f}, lr 0.001\n" for i in range(1, 60)))
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: any(c.renders and c._legend.plain for c in app.query(Chart)))
        legends = [c._legend.plain for c in app.query(Chart) if c._legend.plain]
        assert legends and all("train.log" in text and "rank ?" not in text for text in legends)


async def test_a_directory_of_per_rank_files(tmp_path: Path) -> None:
    ranks = 12
    for r in range(ranks):
        with (tmp_path / f"rank_{r}.log").open("w") as f:
            for i in range(1, 81):
                f.write(LINE.format(i, 1000, 900.0 + 10 * r, 5.0 / (1 + i / 50)))
    app = TrainwatchApp([str(tmp_path)])
    async with app.run_test(size=(160, 45)) as pilot:

        def loss_legend() -> str:
            charts = [c for c in app.query(Chart) if c.metric == "loss"]
            return charts[0]._legend.plain if charts else ""

        assert await wait_for(pilot, lambda: f"mean of {ranks} ranks" in loss_legend())
        await pilot.press("2")
        table = app.query_one(RanksTable)
        assert await wait_for(pilot, lambda: table.row_count == ranks)
        labels = [table.get_row_at(i)[0].plain for i in range(ranks)]
        assert labels == [f"rank {r}" for r in range(ranks)]


def test_a_costly_redraw_is_spaced_out() -> None:
    # a chart redraw that takes 0.5 s (hundreds of ranks on a slow node) is not repeated every second
    slow_interval = 1.0
    scheduler = RedrawScheduler(fast_interval=0.15, slow_interval=slow_interval)

    def next_chart_redraw_after(cost: float) -> float:
        scheduler.paces[CHARTS].waiting = False
        now = time.monotonic()
        scheduler.ran(CHARTS, now, cost)  # a chart redraw just ran and took this long
        plan = scheduler.changed(now)  # ...and the store changed at once
        assert CHARTS in plan and plan[CHARTS] > 0
        return plan[CHARTS]

    assert next_chart_redraw_after(0.0) == pytest.approx(slow_interval, abs=0.05)
    assert next_chart_redraw_after(0.1) == pytest.approx(0.1 / REDRAW_SHARE, abs=0.05)  # 2 % of a core
    assert next_chart_redraw_after(2.0) == pytest.approx(PACE_MAX_S, abs=0.05)  # never further behind


async def test_the_screens_rendering_of_the_charts_counts_for_their_pace(tmp_path: Path) -> None:
    """At 256 ranks the compositor's rendering of a redrawn chart is a third of what the redraw
    costs: left out, the charts took half again their share of a core."""
    with (tmp_path / "rank_0.log").open("w") as f:
        f.writelines(LINE.format(i, 1000, 900.0, 2.0) for i in range(1, 41))
    app = TrainwatchApp([str(tmp_path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: any(c.renders for c in app.query(Chart)))
        await pilot.pause()
        charts = list(app.query(Chart))
        painted = sum(c.take_paint_cost() for c in charts)
        assert painted > 0  # a drawn chart was rendered by the compositor, and that was counted
        assert sum(c.take_paint_cost() for c in charts) == 0  # ...once
        for chart in charts:  # a rendering of a second each since the last redraw
            chart._painted = 1.0
        screen = app.dashboard
        screen._charts()
        assert screen.scheduler.paces[CHARTS].cost >= len(charts)


async def test_ranks_that_appear_later_take_their_place_in_order(tmp_path: Path) -> None:
    def write(rank: int) -> None:
        with (tmp_path / f"rank_{rank}.log").open("w") as f:
            f.writelines(LINE.format(i, 1000, 900.0, 2.0) for i in range(1, 11))

    for r in (0, 2, 10):
        write(r)
    app = TrainwatchApp([str(tmp_path)])
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("2")
        table = app.query_one(RanksTable)
        assert await wait_for(pilot, lambda: table.row_count == 3)
        table.move_cursor(row=1)  # on rank 2
        for r in (1, 3):  # ranks that start writing late sort between the others
            write(r)
        assert await wait_for(pilot, lambda: table.row_count == 5)
        labels = [table.get_row_at(i)[0].plain for i in range(5)]
        assert labels == ["rank 0", "rank 1", "rank 2", "rank 3", "rank 10"]
        assert table.get_row_at(table.cursor_row)[0].plain == "rank 2"
