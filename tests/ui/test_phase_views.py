"""Phase trend tab, profiler breakdown, single-point charts; the Phases tab and the overview agree.

Data: transcribed seed-004 records (_ui_records.py: Megatron timers `forward / backward / allreduce /
optimizer / batch generator / data loader`), seeds 000 and 001 profiler tables read through the
real Pipeline, seed 002's DeepSpeed timer names (sample_logs/deepspeed__coca_4rank_zero1_sighup.log),
seeds 002 and 004 read whole or in part by the real Pipeline.
"""

from __future__ import annotations

import re
from array import array
from pathlib import Path
from statistics import median

import pytest
from _ui_helpers import read, seed004_head
from _ui_records import ITERATIONS, build_store
from conftest import seed

from trainwatch.diagnosis.phases import partition_phases
from trainwatch.diagnosis.shares import logging_interval, phase_keys, phase_trend
from trainwatch.pipeline import Pipeline
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.data import Trace, phase_rows
from trainwatch.ui.widgets.chart import ChartOptions, render_chart
from trainwatch.ui.widgets.phase_bars import PhaseBars, render_phases
from trainwatch.ui.widgets.phase_trend import PhaseTrend, render_trend, trend_legend
from trainwatch.ui.widgets.profiler import BreakdownBar


def frozen_app(store=None, ranks: int = 1) -> TrainwatchApp:  # type: ignore[no-untyped-def]
    return TrainwatchApp(
        store=store if store is not None else build_store(ranks=ranks),
        clock=FrozenClock(wall_s=1_607_752_720.0, mono_s=0.0),
        fast_interval=3600.0,
        slow_interval=3600.0,
    )


def test_partition_leaves_nested_timers_out() -> None:
    megatron = ["forward", "backward", "allreduce", "optimizer", "batch_generator", "data_loader"]
    assert partition_phases(megatron) == ["forward", "backward", "allreduce", "optimizer"]
    deepspeed = [  # seed 002's timers
        "forward_microstep", "backward_microstep", "backward_inner_microstep", "backward_allreduce_microstep",
        "step_microstep", "forward", "backward", "backward_inner", "backward_allreduce", "step",
        "optimizer_gradients", "optimizer_step", "optimizer_allgather",
    ]  # fmt: skip
    assert partition_phases(deepspeed) == ["forward", "backward", "step"]


def test_trend_buckets_are_medians_of_their_steps() -> None:
    store = build_store()
    (key,) = phase_keys(store)
    names, buckets = phase_trend(store, key, 10)
    assert names == ["forward", "backward", "allreduce", "optimizer"]  # batch generator is inside forward
    first, last = buckets[0], buckets[-1]
    assert first is not None and last is not None
    assert all(b is None for b in buckets[1:-1])  # the transcription has no steps between 20 and 22975
    # steps 5, 10, 15, 20: median forward of 567.42, 312.64, 317.30, 319.46 ms
    assert first.seconds["forward"] == pytest.approx((317.30 + 319.46) / 2 / 1000)
    late = [it for it in ITERATIONS if it[0] >= 22975]
    assert last.seconds["backward"] == pytest.approx(median(r[5] for r in late) / 1000)
    # Megatron's elapsed time per iteration is (almost) the sum of the phases: no `other` share
    assert "other" not in last.seconds


def test_trend_draws_a_full_stack_per_range_and_an_axis() -> None:
    store = build_store()
    (key,) = phase_keys(store)
    names, buckets = phase_trend(store, key, 40)
    text = render_trend(names, buckets, 48, 8).plain.splitlines()
    assert len(text) == 9 and text[0].startswith("  100% ┤")
    assert text[-1].strip().startswith("step └5") and text[-1].rstrip().endswith("23k")
    assert text[0][8] == "█" and text[0][-1] == "█"  # the first and last ranges, stacked to 100%
    assert "·" in text[-2]  # ranges without records are marked, not interpolated
    legend = trend_legend(names, buckets, 200).plain
    early = [it for it in ITERATIONS if it[0] <= 20]
    late = [it for it in ITERATIONS if it[0] >= 22975]

    def share(rows: list[tuple[float, ...]], col: int) -> str:
        meds = [median(r[c] for r in rows) for c in (4, 5, 6, 7)]  # forward, backward, allreduce, optimizer
        return f"{100 * meds[col - 4] / sum(meds):.0f}%"

    assert f"forward {share(early, 4)} → {share(late, 4)}" in legend  # 34% → 35%
    assert f"optimizer {share(early, 7)} → {share(late, 7)}" in legend  # 10% → 9%


async def test_phases_tab_keys() -> None:
    app = frozen_app(ranks=4)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        trend = app.query_one(PhaseTrend)
        assert app.focused is trend
        trend.update_from_store()
        shown = trend.render().plain
        assert "rank 0 (1/4" in shown and "share of the step" in shown and "■ optimizer" in shown
        await pilot.press("right_square_bracket")
        assert "rank 1 (2/4" in trend.render().plain
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert "rank 3 (4/4" in trend.render().plain
        await pilot.press("a")
        assert "seconds per step" in trend.render().plain
        assert "forward 0.32s → 0.32s" in trend.render().plain  # median 318.38 ms early, 317.47 ms late


async def test_overview_bars_do_not_stack_nested_timers() -> None:
    app = frozen_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.fast_tick()
        text = app.query_one(PhaseBars).render().plain
        assert "forward" in text and "batch_generator" not in text


@pytest.fixture(scope="module")
def profiled_store():  # type: ignore[no-untyped-def]
    pipeline = Pipeline([str(seed("000")), str(seed("001"))])
    pipeline.read_to_end()
    return pipeline.store


async def test_profiler_tab_shows_the_implied_breakdown(profiled_store) -> None:  # type: ignore[no-untyped-def]
    app = frozen_app(store=profiled_store)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.fast_tick()
        await pilot.press("5")
        await pilot.pause()
        bars = [b.render().plain for b in app.query(BreakdownBar)]
        assert len(bars) == 2
        assert bars[0].startswith("50% of the profiled time is forward")
        assert "■ data 3%" in bars[0] and "■ optimizer 3%" in bars[0]
        assert bars[1].startswith("97% of the profiled step (train_step-0) is forward")
        assert "collectives 96%" in bars[1]


def test_single_point_chart_has_a_marker_and_one_tick() -> None:
    # seed 004 prints one memory report; one point at step 4600
    trace = Trace("rank 0", array("d", [4600.0]), array("d", [12.5]))
    plot = render_chart([trace], 60, 10, name="mem_gib", options=ChartOptions()).plain
    assert "●" in plot
    assert "4,600" in plot and "12.5" in plot
    assert "4599" not in plot and "0.33" not in plot  # no invented range


def test_constant_series_gets_its_value_as_the_only_tick() -> None:
    # the transcribed seed-004 loss scale: 4096.0 on every iteration
    steps = array("d", [it[0] for it in ITERATIONS])
    trace = Trace("rank 0", steps, array("d", [4096.0] * len(steps)))
    for log_y in (False, True):
        lines = render_chart([trace], 60, 10, name="loss_scale", options=ChartOptions(log_y=log_y)).plain.splitlines()
        ticks = [line.split("┤")[0].strip() for line in lines if "┤" in line]
        assert ticks == (["4.1k"] if log_y else ["4,096"])


def test_phases_tab_and_overview_agree_on_seed_002() -> None:
    # seed 002: step time printed every 100 steps (`Batch (t): 1.800`), DeepSpeed timers every step:
    # forward 0.36 + backward 1.04 + step 0.17 = 1.57 s of a 1.80 s step -> `other` ~14%.
    store = read(seed("002"))
    (key,) = phase_keys(store)
    names, buckets = phase_trend(store, key, 150)
    assert all(b is not None and "other" in b.seconds for b in buckets[-10:])
    trend = trend_legend(names, buckets, 400).plain
    bars = render_phases(phase_rows(store), 400).plain

    def late(label: str) -> int:
        return int(re.search(rf"{label} \d+% → (\d+)%", trend).group(1))  # type: ignore[union-attr]

    def overview(label: str) -> int:
        return int(re.search(rf"{label} (\d+)%", bars).group(1))  # type: ignore[union-attr]

    for label in ("forward", "backward", "optimizer step", "other"):
        assert abs(late(label) - overview(label)) <= 2, (label, trend, bars)
    assert 12 <= overview("other") <= 16
    # DeepSpeed's `step` timer is shown as the optimizer step, never next to "step time" as "step"
    assert "■ step" not in bars and "■ step" not in trend


async def test_trend_ranges_are_never_narrower_than_the_logging_interval(tmp_path: Path) -> None:
    # seed 004 prints Megatron's `time (ms)` phase line every 5 iterations
    path = tmp_path / "out.log"
    path.write_text(seed004_head(175), encoding="utf-8")
    store = read(path)
    (key,) = phase_keys(store)
    steps = list(store.series[key.series_key("phase", "forward")].steps)
    assert logging_interval(steps) == 5.0
    _names, buckets = phase_trend(store, key, 152)
    assert all(b is not None for b in buckets)  # no blank column between two logged steps
    assert all(b.last_step - b.first_step >= 5 - 1e-6 for b in buckets if b is not None)
    app = frozen_app(store)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        trend = app.query_one(PhaseTrend)
        trend.update_from_store()
        head = trend.render().plain.splitlines()[0]
        span = float(re.search(r"median of each ~([\d.]+) steps", head).group(1))  # type: ignore[union-attr]
        assert span >= 5
