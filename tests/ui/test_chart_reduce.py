"""A chart's redraw cost is bounded by the columns, not the run length (trainwatch/ui/data/reduce.py,
trainwatch/ui/widgets/chart.py): each shortcut it takes draws what the plain way draws."""

from __future__ import annotations

import math
import random
from array import array

import pytest

from trainwatch.records import Step
from trainwatch.store.series import Series
from trainwatch.store.store import Store
from trainwatch.ui.data import Trace, chart_traces, downsample
from trainwatch.ui.widgets import chart
from trainwatch.ui.widgets.chart import ChartOptions, render_chart


def _messy(n: int, seed: int) -> tuple[array[float], array[float]]:
    """Steps and values as real series have them: repeats (an integer metric), NaN and ±inf
    (a loss gone bad), a -0.0 next to 0.0, and a drift."""
    rng = random.Random(seed)
    xs = array("d", (float(i) for i in range(n)))
    ys = array("d", (round(10 / (1 + i / 300) + rng.random(), 1) for i in range(n)))
    for k in rng.sample(range(n), n // 40):
        ys[k] = rng.choice([math.nan, math.inf, -math.inf, 0.0, -0.0])
    return xs, ys


def _same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("positive_only", [False, True])
@pytest.mark.parametrize("n", [50, 999, 20_000])
def test_a_slices_min_and_max_are_found_where_index_finds_them(n: int, positive_only: bool) -> None:
    """The array path finds each column's min and max by a byte search of its doubles; a list
    (no bytes) goes through `index`: the envelopes agree point for point, in order."""
    for seed in range(4):
        xs, ys = _messy(n, seed)
        fast = downsample(xs, ys, 60, positive_only=positive_only)
        plain = downsample(list(xs), list(ys), 60, positive_only=positive_only)
        assert fast.env_x == plain.env_x
        assert _same(fast.env_y, plain.env_y)
        assert fast.mean_x == plain.mean_x and _same(fast.mean_y, plain.mean_y)
        assert fast.counts == plain.counts


@pytest.mark.parametrize("n", [999, 20_000])
def test_a_chart_without_a_mean_line_has_the_same_envelope_without_the_sums(n: int) -> None:
    for seed in range(4):
        xs, ys = _messy(n, seed)
        with_means = downsample(xs, ys, 60)
        without = downsample(xs, ys, 60, means=False)
        assert without.env_x == with_means.env_x and _same(without.env_y, with_means.env_y)
        assert without.mean_x == [] and without.mean_y == []
        assert len(without.env_x) > 60  # (a column per slot, two points each, bar the all-bad ones)


def test_a_long_runs_x_axis_starts_at_its_first_step() -> None:
    """The x range comes from the trace's ends and the reduced points, not a pass over every
    step: a 200k-step run starting at step 0 still has 0 under the axis's first column."""
    n = 200_000
    xs = array("d", (float(i) for i in range(n)))
    ys = array("d", (5 + math.sin(i / 900) for i in range(n)))
    lines = render_chart([Trace("0", xs, ys)], 100, 16, name="step_time_s", options=ChartOptions()).plain.splitlines()
    axis, labels = lines[-2], lines[-1]
    assert axis.lstrip().startswith("└┬")  # a tick at the axis's first column...
    assert labels.split()[0] == "0" and labels.split()[-1] in ("180k", "190k", "200k")  # ...labelled 0


@pytest.mark.parametrize("name", ["loss", "step_time_s"])
def test_signals_added_directly_draw_what_plotexts_draw_draws(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Signals join the figure without `fig.draw`'s walk for the colour cycler: every signal
    has its colour, so the plot is the same, colours included."""
    rng = random.Random(7)
    traces = []
    for k in range(3):
        xs = array("d", (float(i) for i in range(5000)))
        ys = array("d", (3 + k + rng.random() for _ in range(5000)))
        ys[100 * (k + 1)] = 400.0  # off the scale: an arrow at the edge
        traces.append(Trace(f"rank {k}", xs, ys))
    direct = render_chart(traces, 100, 20, name=name, options=ChartOptions(), marks=[2500.0])
    monkeypatch.setattr(chart, "_adder", lambda fig: fig.draw)
    drawn = render_chart(traces, 100, 20, name=name, options=ChartOptions(), marks=[2500.0])
    assert direct.plain == drawn.plain
    assert direct.spans == drawn.spans
    assert "▲" in direct.plain and "×" in direct.plain


@pytest.mark.parametrize("log_y", [False, True])
@pytest.mark.parametrize("name", ["loss", "step_time_s"])
def test_signals_made_with_one_marker_draw_what_plotexts_signal_draws(
    name: str, log_y: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signals are made through plotext's kernel call with one marker for every point, not
    `fig.signal`'s copy per point: the same plot, colours, arrows and marks included."""
    rng = random.Random(11)
    traces = []
    for k in range(3):
        xs = array("d", (float(i) for i in range(4000)))
        ys = array("d", (3 + k + rng.random() for _ in range(4000)))
        ys[90 * (k + 1)] = 400.0
        traces.append(Trace(f"rank {k}", xs, ys))
    traces.append(Trace("one point", array("d", [10.0]), array("d", [3.5])))
    options = ChartOptions(log_y=log_y)
    made = render_chart(traces, 100, 20, name=name, options=options, marks=[2500.0])
    monkeypatch.setattr(chart, "_signal_maker", lambda fig: lambda xs, ys, m: fig.signal(xs, ys, marker=m))
    plotexts = render_chart(traces, 100, 20, name=name, options=options, marks=[2500.0])
    assert made.plain == plotexts.plain
    assert made.spans == plotexts.spans
    assert "▲" in made.plain and "×" in made.plain and "●" in made.plain


def test_overflow_marks_outside_the_drawn_steps_are_left_out() -> None:
    """The loss-scale chart marks fp16 overflows: zoomed to the last steps (or after a relaunch
    whose earlier attempt ran further), an overflow outside the steps drawn is not marked, and the
    x axis is not stretched back to it."""
    xs = array("d", (float(i) for i in range(900, 1001)))
    ys = array("d", (4096.0 for _ in range(len(xs))))
    traces = [Trace("0", xs, ys)]
    assert chart.marks_in_view([50.0, 950.0, 1200.0], traces) == [950.0]
    assert chart.marks_in_view(None, traces) is None
    assert chart.marks_in_view([50.0], []) == [50.0]  # (nothing drawn: nothing to keep them to)
    kept = chart.marks_in_view([50.0, 950.0], traces)
    labels = render_chart(traces, 100, 12, name="loss_scale", options=ChartOptions(), marks=kept).plain.splitlines()[-1]
    assert (
        labels.split()[0] in ("900", "920")
        and "×" in render_chart(traces, 100, 12, name="loss_scale", options=ChartOptions(), marks=kept).plain
    )
    stretched = render_chart(traces, 100, 12, name="loss_scale", options=ChartOptions(), marks=[50.0, 950.0])
    assert stretched.plain.splitlines()[-1].split()[0] not in ("900", "920")  # what the filter prevents


def _columns(b: object) -> list[tuple[tuple[float, float], ...]]:
    xs, ys = b  # type: ignore[misc]
    return [tuple(sorted(zip(xs[i : i + 2], ys[i : i + 2], strict=True))) for i in range(0, len(xs), 2)]


def test_a_noisy_envelope_is_drawn_through_the_nearer_value_of_each_column() -> None:
    """A column's min and max are one vertical stroke whichever comes first; joining the next
    column through the nearer one draws the same band without a stroke across it each time."""
    rng = random.Random(7)
    n = 40_000
    xs = array("d", (float(i) for i in range(n)))
    ys = array("d", (1 / (1 + i / 5000) + rng.random() for i in range(n)))
    b = downsample(xs, ys, 100)
    drawn = chart.drawn_envelope(b)
    assert _columns(drawn) == _columns((b.env_x, b.env_y))  # every column keeps its two points

    def travel(ys: list[float]) -> float:
        return sum(abs(ys[i] - ys[i - 1]) for i in range(2, len(ys), 2))  # between columns

    assert travel(drawn[1]) < travel(b.env_y) / 3
    for i in range(2, len(drawn[1]), 2):  # each column entered through its nearer value
        last = drawn[1][i - 1]
        assert abs(drawn[1][i] - last) <= abs(drawn[1][i + 1] - last)


def test_a_smooth_series_and_raw_points_are_drawn_as_they_are() -> None:
    """A falling loss enters each column through the value that came first: nothing moves.
    Fewer points than columns are the points themselves (no pairs): never reordered."""
    xs = array("d", (float(i) for i in range(10_000)))
    ys = array("d", (5 / (1 + i / 100) for i in range(10_000)))
    b = downsample(xs, ys, 80)
    assert chart.drawn_envelope(b) == (b.env_x, b.env_y)
    few = downsample([0.0, 1.0, 2.0, 3.0], [1.0, 9.0, 2.0, 8.0], 80)
    assert chart.drawn_envelope(few) == ([0.0, 1.0, 2.0, 3.0], [1.0, 9.0, 2.0, 8.0])


def test_a_chart_fills_its_widget_whatever_size_the_terminal_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """plotext clamps a plot to the terminal its process reports; in a browser session (textual-serve
    sets no LINES) or with stdout piped that is 80x24, and a taller or wider chart came out cut."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    xs = array("d", (float(i) for i in range(500)))
    ys = array("d", (1 / (1 + i) for i in range(500)))
    text = render_chart([Trace("0", xs, ys)], 150, 40, name="loss", options=ChartOptions())
    lines = text.plain.split("\n")
    assert len(lines) == 40
    assert max(len(line) for line in lines) == 150


def test_a_redraw_pauses_the_collector_and_always_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A redraw is thousands of plotext objects refcounting frees: no collection runs in it, and
    the collector is on again after it, even when it fails; a pause someone else holds is kept."""
    import gc

    seen: list[bool] = []
    real_lines = chart.chart_lines

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real_lines(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chart, "chart_lines", spy)
    xs = array("d", (float(i) for i in range(500)))
    render_chart([Trace("0", xs, xs)], 100, 20, name="loss", options=ChartOptions())
    assert seen == [False] and gc.isenabled()

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bad series")

    monkeypatch.setattr(chart, "chart_lines", broken)
    with pytest.raises(RuntimeError):
        render_chart([Trace("0", xs, xs)], 100, 20, name="loss", options=ChartOptions())
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.setattr(chart, "chart_lines", real_lines)
        render_chart([Trace("0", xs, xs)], 100, 20, name="loss", options=ChartOptions())
        assert not gc.isenabled()
    finally:
        gc.enable()


def _close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        x == y or (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12)
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("positive_only", [False, True])
@pytest.mark.parametrize("n", [300, 5_000, 70_000])
def test_a_column_read_from_block_summaries_is_the_column_read_from_its_points(n: int, positive_only: bool) -> None:
    """A store series' chart reads each column from the summaries of the blocks inside it and its
    edge points (`Series.blocks`): the same envelope, point for point and in order, ties between
    equal values (0.0 and -0.0 too) going to the first; the same mean to rounding; the columns
    touching a NaN or an infinity read from their points, as before. Compactions included."""
    for seed in range(3):
        xs, ys = _messy(n, seed)
        series = Series(capacity=4096)
        series.extend(xs, ys, array("d", [math.nan]) * n)
        blocks = series.blocks()
        assert len(blocks.lo) == len(series) // blocks.size
        for columns in (7, 60, 113):
            for means in (True, False):
                plain = downsample(series.steps, series.values, columns, positive_only, means)
                read = downsample(series.steps, series.values, columns, positive_only, means, blocks=blocks)
                assert read.env_x == plain.env_x
                assert _same(read.env_y, plain.env_y)
                assert [math.copysign(1, v) for v in read.env_y] == [math.copysign(1, v) for v in plain.env_y]
                assert read.mean_x == plain.mean_x and _close(read.mean_y, plain.mean_y)
                assert read.counts == plain.counts


@pytest.mark.parametrize("positive_only", [False, True])
def test_columns_of_many_clean_blocks_with_ties_everywhere_read_as_from_their_points(positive_only: bool) -> None:
    """Long clean series of few distinct values (ties in every block, 0.0 beside -0.0): each column
    spans many blocks, and the first of equal values is found in the first block that holds it."""
    rng = random.Random(5)
    for n in (20_000, 33_333):
        values = [rng.choice([1.0, 2.0, 2.0, 3.0, 0.0, -0.0, 0.5]) for _ in range(n)]
        series = Series(capacity=1 << 17)
        series.extend(array("d", range(n)), array("d", values), array("d", [math.nan]) * n)
        blocks = series.blocks()
        for columns in (7, 60, 113):
            plain = downsample(series.steps, series.values, columns, positive_only)
            read = downsample(series.steps, series.values, columns, positive_only, blocks=blocks)
            assert read.env_x == plain.env_x and read.counts == plain.counts
            assert [math.copysign(1, v) * v for v in read.env_y] == [math.copysign(1, v) * v for v in plain.env_y]
            assert [math.copysign(1, v) for v in read.env_y] == [math.copysign(1, v) for v in plain.env_y]
            assert _close(read.mean_y, plain.mean_y)


def test_block_summaries_follow_a_series_that_grows_and_compacts() -> None:
    """Blocks are summarized as the series grows and summarized again after a compaction moves
    its points: a chart asking now and then reads what it would read from the points."""
    series = Series(capacity=2048)
    rng = random.Random(3)
    for i in range(9000):
        series.append(float(i), rng.choice([1.0, 2.0, 2.0, 3.5]) + (i % 50) / 7)
        if i % 700 == 0:
            blocks = series.blocks()
            assert len(blocks.lo) == len(series) // blocks.size
            plain = downsample(series.steps, series.values, 20)
            read = downsample(series.steps, series.values, 20, blocks=blocks)
            assert read.env_x == plain.env_x and read.env_y == plain.env_y
            assert read.counts == plain.counts and _close(read.mean_y, plain.mean_y)
    assert series.compactions > 0


def test_a_dashboard_chart_reads_the_store_series_through_its_blocks() -> None:
    """The copies a chart takes of a whole series carry its block summaries; a zoom to the last
    points (a slice the blocks do not line up with) and the wall-time axis carry none."""
    store = Store()
    for i in range(30_000):
        store.add(Step("a.log", 0, i, None, i + 1, {"loss": 2.0 + math.sin(i / 40)}))
    traces, _ = chart_traces(store, "loss", last_n=None, wall_time=False)
    assert traces[0].blocks is not None and len(traces[0].blocks.lo) == 30_000 // traces[0].blocks.size
    used = downsample(traces[0].xs, traces[0].ys, 90, blocks=traces[0].blocks)
    assert used.env_y == downsample(traces[0].xs, traces[0].ys, 90).env_y
    zoomed, _ = chart_traces(store, "loss", last_n=500, wall_time=False)
    assert zoomed[0].blocks is None
    timed = Store()
    for i in range(3000):
        stamp = f"2024-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}"
        timed.add(Step("a.log", 0, i, stamp, i + 1, {"loss": 2.0 + math.sin(i / 40)}))
    by_time, used = chart_traces(timed, "loss", last_n=None, wall_time=True)
    assert used and by_time[0].blocks is None  # (the wall-time axis keeps the points that have a time)
    whole = render_chart(traces, 100, 20, name="loss", options=ChartOptions())
    traces[0].blocks = None
    assert render_chart(traces, 100, 20, name="loss", options=ChartOptions()).plain == whole.plain
