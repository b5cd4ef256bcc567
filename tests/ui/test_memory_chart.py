"""The memory chart shows the peak a user watches (seed 004: max allocated 14.2 GiB, not the
one 0.29 GiB `allocated` report), with the other memory metrics selectable."""

from __future__ import annotations

from pathlib import Path

from _ui_records import SOURCE, build_store

from trainwatch.pipeline import Pipeline
from trainwatch.records import Step
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.data import default_charts
from trainwatch.ui.widgets.chart import Chart

# seed 004 line 346 (Megatron's memory report after step 5), as tests/parsers/test_megatron.py reads it
MEGATRON_MEMORY = {
    "mem_gib": 294.60595703125 / 1024,
    "max_mem_gib": 14566.3486328125 / 1024,
    "reserved_mem_gib": 20508.0 / 1024,
    "max_reserved_mem_gib": 20508.0 / 1024,
}


def test_the_default_memory_chart_is_the_peak_allocated_then_the_peak_reserved() -> None:
    assert default_charts(["loss", *MEGATRON_MEMORY]) == ["loss", "max_mem_gib"]
    assert default_charts(["loss", "mem_gib", "reserved_mem_gib", "max_reserved_mem_gib"]) == [
        "loss",
        "max_reserved_mem_gib",
    ]
    assert default_charts(["loss", "mem_gib"]) == ["loss", "mem_gib"]


def test_a_log_without_the_usual_metrics_charts_its_own() -> None:
    # CatBoost (tests/corpus/catboost): `learn`, `test`, `best`, `total`, `remaining`, and no `loss`
    assert default_charts(["best", "epoch", "learn", "remaining_s", "test", "total_s"]) == [
        "best",
        "learn",
        "remaining_s",
        "test",
        "total_s",
    ]
    assert default_charts(["epoch"]) == []
    assert default_charts(["epoch", "learn", "lr"]) == ["lr"]  # the usual metrics first, alone


async def test_seed_004s_memory_chart_reads_the_14_gib_peak_and_the_others_can_be_picked() -> None:
    store = build_store(events=False)
    store.add_many([Step(SOURCE, 0, 5, None, 346, dict(MEGATRON_MEMORY))])
    app = TrainwatchApp(store=store, clock=FrozenClock(wall_s=1_607_752_714.0, mono_s=0.0))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.slow_tick()
        await pilot.pause()
        charts = {c.metric: c for c in app.query(Chart)}
        assert "max_mem_gib" in charts and "mem_gib" not in charts
        assert charts["max_mem_gib"].border_title == "peak memory (GiB)"
        assert "14.22" in charts["max_mem_gib"]._legend.plain
        await pilot.press("m")
        assert {"mem_gib", "reserved_mem_gib", "max_reserved_mem_gib"} <= set(app.screen.available)  # type: ignore[attr-defined]


async def test_rl_games_overview_charts_its_own_figures() -> None:
    """rl_games prints no loss, no learning rate, no step time: its own figures are charted."""
    log = next((Path(__file__).resolve().parents[1] / "corpus" / "rl_games").glob("brax*.log"))
    pipeline = Pipeline([str(log)])
    pipeline.read_to_end()
    app = TrainwatchApp(store=pipeline.store, clock=FrozenClock(wall_s=1_607_752_714.0, mono_s=0.0))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.dashboard.slow_tick()
        await pilot.pause()
        shown = [c.metric for c in app.query(Chart) if c.display]
        assert {"fps_step", "fps_total"} <= set(shown)
