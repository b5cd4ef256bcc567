"""`m`: the picker keeps the dashboard's order (loss first) and refuses a chart past the
maximum with a message naming it, instead of dropping one silently."""

from __future__ import annotations

from _ui_records import SOURCE, build_store
from textual.widgets import SelectionList, Static

from trainwatch.records import Step
from trainwatch.store.store import Store
from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.clock import FrozenClock
from trainwatch.ui.data import title_for
from trainwatch.ui.screens.dashboard import MAX_CHARTS
from trainwatch.ui.screens.metrics import MetricPicker, chart_order
from trainwatch.ui.widgets.chart import Chart

EXTRA = ("grad_norm", "data_time_s", "tflops", "eval_loss", "zeta_custom")


def store_with_many_metrics() -> Store:
    store = build_store(events=False)
    store.add_many([Step(SOURCE, 0, s, None, 9000 + s, {m: 1.0 + s for m in EXTRA}) for s in (1, 2, 3)])
    return store


def test_chart_order_puts_loss_first_then_the_defaults_then_the_rest_by_name() -> None:
    assert chart_order(["zeta", "lr", "alpha", "step_time_s", "loss"]) == ["loss", "step_time_s", "lr", "alpha", "zeta"]


async def test_a_chart_past_the_maximum_is_refused_with_its_name_and_the_order_is_kept() -> None:
    app = TrainwatchApp(store=store_with_many_metrics(), clock=FrozenClock(wall_s=1_607_752_714.0, mono_s=0.0))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("m")
        picker = app.screen
        assert isinstance(picker, MetricPicker)
        assert picker.available[:3] == ["loss", "step_time_s", "lr"]
        listing = picker.query_one(SelectionList)
        listing.deselect_all()
        for name in picker.available[:MAX_CHARTS]:
            listing.select(name)
        extra = picker.available[MAX_CHARTS]
        listing.focus()
        listing.highlighted = MAX_CHARTS
        await pilot.press("space")
        await pilot.pause()
        assert extra not in listing.selected and len(listing.selected) == MAX_CHARTS
        note = str(picker.query_one("#picker-note", Static).render())
        assert "not added" in note and title_for(extra) in note
        await pilot.press("enter")
        await pilot.pause()
        shown = [c.metric for c in app.query(Chart)]
        assert shown == picker.available[:MAX_CHARTS] and shown[0] == "loss"
