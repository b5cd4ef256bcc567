"""The header lists every rank the log names, not only the ones that printed metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

from _ui_helpers import header_text, wait_for

from trainwatch.ui.app import TrainwatchApp

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "deepspeed__coca_4rank_zero1_sighup.log"


async def test_four_rank_torchrun_log_shows_all_four_ranks(tmp_path: Path) -> None:
    # Trimmed seed 002: only rank 0 prints steps; torchrun's barrier lines name ranks 0-3.
    log = tmp_path / "nohup.out"
    shutil.copy(SAMPLE, log)
    app = TrainwatchApp([str(log)])
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "CRASHED" in header_text(app))
        assert "ranks: 0,1,2,3" in header_text(app)
