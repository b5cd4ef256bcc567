"""The charts' robust y range: a warm-up outlier or a lone blip is marked at the edge, a
divergence sets the scale."""

from __future__ import annotations

from array import array

from trainwatch.ui.data import Trace
from trainwatch.ui.data.labels import fit_labels
from trainwatch.ui.data.yrange import robust_range
from trainwatch.ui.widgets.chart import ChartOptions, legend, render_chart


def steps(n: int) -> list[float]:
    return [float(s) for s in range(1, n + 1)]


def test_a_first_step_of_38s_does_not_set_the_step_time_scale() -> None:
    ys = [38.2] + [1.8 + 0.01 * (i % 7) for i in range(199)]  # seed 002: compile time, then ~1.8 s
    r = robust_range([(steps(200), ys)])
    assert r is not None
    assert r.hi < 2.0 and r.lo > 1.7
    assert [(o.x, o.y, o.above) for o in r.outliers] == [(1.0, 38.2, True)]


def test_a_loss_that_diverges_and_stays_sets_the_scale() -> None:
    ys = [2.0 - 0.001 * i for i in range(180)] + [50.0 + i for i in range(20)]
    r = robust_range([(steps(200), ys)])
    assert r is not None and r.hi >= 69.0 and not r.outliers


def test_the_latest_point_is_never_left_out_it_may_be_the_start_of_a_divergence() -> None:
    ys = [2.0] * 199 + [40.0]
    r = robust_range([(steps(200), ys)])
    assert r is not None and r.hi == 40.0 and not r.outliers


def test_a_lone_blip_mid_run_is_marked_not_scaled() -> None:
    ys = [2.0 + 0.01 * (i % 5) for i in range(200)]
    ys[100] = 90.0
    r = robust_range([(steps(200), ys)])
    assert r is not None and r.hi < 3.0 and [o.y for o in r.outliers] == [90.0]


def test_no_far_point_gives_the_plain_min_max() -> None:
    ys = [float(i) for i in range(100)]
    r = robust_range([(steps(100), ys)])
    assert r is not None and (r.lo, r.hi, r.outliers) == (0.0, 99.0, ())


def test_the_step_time_chart_labels_its_ticks_in_the_real_range_and_marks_the_outlier() -> None:
    ys = array("d", [38.2] + [1.8 + 0.01 * (i % 7) for i in range(199)])
    trace = Trace("rank 0", array("d", steps(200)), ys)
    off: list = []
    plot = render_chart([trace], 80, 16, name="step_time_s", options=ChartOptions(), off_scale=off).plain
    assert "▲" in plot
    assert "38" not in plot  # no tick up at 38 s: the scale is the real step times'
    assert "1.8" in plot
    assert [o.y for o in off] == [38.2]


def test_the_legend_names_the_off_scale_point_and_its_step() -> None:
    ys = array("d", [38.2] + [1.8 + 0.01 * (i % 7) for i in range(199)])
    trace = Trace("rank 0", array("d", steps(200)), ys)
    off: list = []
    render_chart([trace], 80, 16, name="step_time_s", options=ChartOptions(), off_scale=off)
    assert "▲ 38.2 @1" in legend([trace], "step_time_s", 0.0, 80, off).plain


def test_a_narrow_legend_shortens_the_rank_labels_and_keeps_every_value() -> None:
    # four ranks, rank 3 the straggler: its value is what the user came for
    values = [1.812, 1.811, 1.809, 2.403]
    traces = [Trace(f"rank {r}", array("d", [1.0, 2.0]), array("d", [1.8, v])) for r, v in enumerate(values)]
    text = legend(traces, "step_time_s", 0.0, 46).plain
    assert "2.403" in text[:46] and "r3 2.403" in text
    assert "rank 0" in legend(traces, "step_time_s", 0.0, 200).plain  # room enough: full labels


def test_long_source_labels_are_cut_in_the_middle_keeping_the_rank() -> None:
    labels = ["…/logs/node1/out.log:rank 0", "…/logs/node2/out.log:rank 1"]
    short = fit_labels(labels, 20, 40)
    assert all(len(s) <= 10 for s in short)
    assert short[0].endswith(":r0") and short[1].endswith(":r1")
    assert fit_labels(labels, 0, 200) == labels
