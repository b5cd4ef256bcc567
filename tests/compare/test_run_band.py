"""A run with several ranks is drawn in compare as a band (its ranks' min and max, in the run's
colour) around its mean line; a single-process run stays one line. Real logs: a 4-rank mmengine
run (ranks__mmengine_tee3_control.log, step 35 by hand: rank 0 16.5044, rank 1 10.8319, rank 2
11.6841, rank 3 12.8243) and a single-process mmengine run."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwatch.pipeline import Pipeline
from trainwatch.store.store import Store
from trainwatch.ui.data.runs import STEP, run_row, run_traces
from trainwatch.ui.widgets.chart import BAND_NOTE, ChartOptions, chart_lines, colour, legend, render_chart

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
COLUMNS = 200  # wider than the steps: each of the 4-rank run's steps has a column of its own


def _store(name: str) -> Store:
    pipeline = Pipeline([str(SAMPLES / name)])
    pipeline.read_to_end()
    return pipeline.store


@pytest.fixture(scope="module")
def runs() -> list[tuple[str, Store]]:
    return [("four", _store("ranks__mmengine_tee3_control.log")), ("one", _store("mmengine__runner_cpu_healthy.log"))]


def test_the_four_rank_run_is_a_band_of_its_ranks_min_and_max_the_single_run_a_line(runs) -> None:
    traces, _used = run_traces(runs, "loss", last_n=None, x_axis=STEP)
    lines = chart_lines(traces, COLUMNS, name="loss", options=ChartOptions(smoothing=0.0))
    four = [line for line in lines if line.colour == 0]
    one = [line for line in lines if line.colour == 1]
    assert [line.edge for line in four] == ["dim", "dim", None]  # low edge, high edge, then the mean line
    low, high, mean = (line.buckets for line in four)
    at = min(range(len(low.env_x)), key=lambda j: abs(low.env_x[j] - 35))  # the column holding step 35
    assert abs(low.env_x[at] - 35) < 0.5
    assert low.env_y[at] == 10.8319 and high.env_y[at] == 16.5044  # rank 1 lowest, rank 0 highest
    assert mean.mean_y[at] == pytest.approx((16.5044 + 10.8319 + 11.6841 + 12.8243) / 4)
    assert len(one) == 1 and one[0].edge is None  # one rank: its line, no band
    single = next(iter(runs[1][1].series_for("loss").values()))
    assert one[0].buckets.env_y == list(single.values)


def test_the_band_is_drawn_in_the_runs_own_colour_dimmed(runs) -> None:
    traces, _used = run_traces(runs, "loss", last_n=None, x_axis=STEP)
    plot = render_chart(traces, 120, 20, name="loss", options=ChartOptions(smoothing=0.0))
    styles = {str(span.style) for span in plot.spans}
    assert any("dim" in st and f"color({colour(0)})" in st for st in styles), styles
    assert not any("dim" in st and f"color({colour(1)})" in st for st in styles)  # the single run: no band


def test_the_legend_gives_each_runs_latest_mean_and_names_the_band_once(runs) -> None:
    traces, _used = run_traces(runs, "loss", last_n=None, x_axis=STEP)
    shown = legend(traces, "loss", 0.9, 77).plain
    assert "four 5.983" in shown  # (6.803 + 3.7407 + 5.0896 + 8.2968) / 4, the ranks at step 40
    assert "one 0.6851" in shown
    assert shown.count(BAND_NOTE) == 1
    alone, _used = run_traces(runs[1:], "loss", last_n=None, x_axis=STEP)
    assert "band" not in legend(alone, "loss", 0.9, 77).plain  # nothing banded, nothing said


def test_a_run_keeps_its_colour_on_a_chart_an_earlier_run_has_no_data_for(runs) -> None:
    assert "grad_norm" not in runs[0][1].metric_names()
    traces, _used = run_traces(runs, "grad_norm", last_n=None, x_axis=STEP)
    assert [t.label for t in traces] == ["one"]
    lines = chart_lines(traces, COLUMNS, name="grad_norm", options=ChartOptions())
    assert {line.colour for line in lines} == {1}
    assert f"color({colour(1)})" in str(legend(traces, "grad_norm", 0.9, 77).spans[0].style)


def test_the_runs_row_counts_the_ranks(runs) -> None:
    assert [run_row(label, store).ranks for label, store in runs] == [4, 1]
    coca = _store("deepspeed__coca_4rank_zero1_sighup.log")  # loss from rank 0 only; 4 ranks named in the log
    assert run_row("coca", coca).ranks == 4


def test_more_runs_than_rank_lines_stay_runs_not_one_band_of_ranks(runs) -> None:
    many = [(f"run{i}", runs[i % 2][1]) for i in range(9)]  # 9 > MAX_RANK_LINES
    traces, _used = run_traces(many, "loss", last_n=None, x_axis=STEP)
    lines = chart_lines(traces, COLUMNS, name="loss", options=ChartOptions(smoothing=0.0))
    assert "grey" not in {line.edge for line in lines}  # no all-ranks band across runs
    assert {line.colour for line in lines} == set(range(9))
    shown = legend(traces, "loss", 0.9, 400).plain
    assert "mean of" not in shown and "+1 runs" in shown
