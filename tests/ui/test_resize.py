"""Resizing the terminal: at 80 columns the side panel folds and the charts take the width; every chart
fits its panel after shrinking and growing again (no wrapped lines, no small plot in a big panel).

Logs: seed 002 (torchrun + DeepSpeed CoCa) read by the real Pipeline; transcribed seed-004 records
(_ui_records.py) for the charts.
"""

from __future__ import annotations

from _ui_helpers import frozen, wait_for
from _ui_records import build_store
from conftest import seed

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.chart import Chart


async def test_resizing_to_80_columns_folds_the_side_panel() -> None:
    app = TrainwatchApp([str(seed("002"))])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: bool(list(app.query(Chart))))
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert not app.query_one("#side").display
        shown = [c for c in app.query(Chart) if c.display]
        assert shown and shown[0].metric == "loss"
        assert shown[0].size.width >= 70  # not a 7-column box titled `lo…`
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        await pilot.pause()
        assert app.query_one("#side").display


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
