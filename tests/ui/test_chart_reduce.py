"""A chart's redraw cost is bounded by the columns, not the run length (trainwatch/ui/data/reduce.py,
trainwatch/ui/widgets/chart.py): each shortcut it takes draws what the plain way draws."""

from __future__ import annotations

import math
import random
from array import array

import pytest

from trainwatch.ui.data import Trace, downsample
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
