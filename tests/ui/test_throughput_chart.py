"""DeepSpeed's running-average throughput (`timer.py ... SamplesPerSec=`) is charted and listed per rank
under its own name, never relabelled as the per-step throughput.

Log: the head of seed 004 (DeepSpeed + Megatron GPT-2) read live by the dashboard.
"""

from __future__ import annotations

from pathlib import Path

from _ui_helpers import seed004_head, wait_for

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.chart import Chart
from trainwatch.ui.widgets.ranks import RanksTable


async def test_running_average_throughput_is_charted_under_its_own_name(tmp_path: Path) -> None:
    # seed 004 line 480: `[INFO] [timer.py:166:stop] 0/100, SamplesPerSec=421.75204796909713`
    path = tmp_path / "out.log"
    path.write_text(seed004_head(200), encoding="utf-8")
    app = TrainwatchApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "running_avg_samples_per_s" in app.metrics_to_chart())
        app.dashboard.slow_tick()
        await pilot.pause()
        chart = next(c for c in app.query(Chart) if c.metric == "running_avg_samples_per_s")
        assert "running avg" in str(chart.border_title)
        assert "samples_per_s" not in app.metrics_to_chart()  # nothing relabelled
        await pilot.press("2")
        assert await wait_for(pilot, lambda: app.query_one(RanksTable).row_count > 0)
        row = [str(c) for c in app.query_one(RanksTable).get_row_at(0)]
        assert any("423.3" in c for c in row), row  # line 622: SamplesPerSec=423.3389079822854
