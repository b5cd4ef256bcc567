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


LINE = (
    " iteration {:8d}/ {:8d} | elapsed time per iteration (ms): 900.0 | learning rate 1.000E-04 |"
    " lm loss {:.6E} | loss scale 4096.0 |\n"
)


async def test_header_follows_new_steps_and_ranks_of_growing_files(tmp_path: Path) -> None:
    # The header keeps its ranks and progress between clock ticks: news must still show.
    for r in range(2):
        (tmp_path / f"rank_{r}.log").write_text("".join(LINE.format(i, 1000, 2.0) for i in range(1, 11)))
    (tmp_path / "rank_2.log").write_text("")
    app = TrainwatchApp([str(tmp_path)], poll=True, poll_interval=0.05)
    async with app.run_test(size=(160, 45)) as pilot:
        assert await wait_for(pilot, lambda: "step 10" in header_text(app) and "ranks: 0,1" in header_text(app))
        for r in range(3):
            with (tmp_path / f"rank_{r}.log").open("a") as f:
                f.write("".join(LINE.format(i, 1000, 2.0) for i in range(11 if r < 2 else 1, 16)))
        assert await wait_for(pilot, lambda: "step 15" in header_text(app) and "ranks: 0,1,2" in header_text(app))
