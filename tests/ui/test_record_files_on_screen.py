"""`trainwatch RUN_DIR` on record files written by the frameworks' own writers (tests/real_writers.py):
a TensorBoard event file, Lightning's `metrics.csv` and HF's `trainer_state.json` shown live on the
dashboard, and in `summary` and `export`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _ui_helpers import row_texts, wait_for
from real_writers import csv_logger, need, summary_writer

from trainwatch.ui.app import TrainwatchApp
from trainwatch.ui.widgets.chart import Chart
from trainwatch.ui.widgets.ranks import RanksTable

# The frameworks' own writers: importing them (torch, lightning) takes seconds.
pytestmark = pytest.mark.slow


class Writers:
    """One run directory, written by the three writers as a run would."""

    def __init__(self, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tensorboard = summary_writer(run_dir / "tb", monkeypatch)
        self.lightning = csv_logger(run_dir)
        self.state: Any = need("transformers").TrainerState(max_steps=100)
        self.state_path = run_dir / "trainer_state.json"

    def step(self, step: int, tb_loss: float, csv_loss: float, hf_loss: float) -> None:
        self.tensorboard.add_scalar("train/loss", tb_loss, step)
        self.tensorboard.flush()
        self.lightning.log_metrics({"train_loss": csv_loss}, step=step)
        self.state.log_history.append({"loss": hf_loss, "step": step})
        self.state.save_to_json(str(self.state_path))

    def close(self) -> None:
        self.tensorboard.close()
        self.lightning.finalize("success")


async def test_record_files_live_on_the_dashboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if True:
        writers = Writers(tmp_path, monkeypatch)
        writers.step(10, 3.125, 4.25, 5.375)
        app = TrainwatchApp([str(tmp_path)])
        async with app.run_test(size=(160, 45)) as pilot:
            table = app.query_one(RanksTable)

            def shown() -> str:
                return " ".join(" ".join(row) for row in row_texts(table))

            assert await wait_for(pilot, lambda: table.row_count == 3), shown()
            for value in ("3.125", "4.25", "5.375"):
                assert value in shown()
            writers.step(20, 2.625, 3.75, 4.875)  # written while the dashboard follows them

            def legend() -> str:  # charts are (re)built on the slow tick: look them up each time
                app.dashboard.slow_tick()
                charts = [c for c in app.query(Chart) if c.metric == "loss"]
                return charts[0]._legend.plain if charts else ""

            assert await wait_for(pilot, lambda: "2.625" in legend()), legend()
            await pilot.press("2")  # the Ranks tab: one row per file, its newest step and loss
            new = ("2.625", "3.75", "4.875")
            assert await wait_for(pilot, lambda: all(v in shown() for v in new)), shown()
            assert [row[1] for row in row_texts(table)] == ["20", "20", "20"]
        writers.close()


def test_record_files_in_summary_and_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writers = Writers(tmp_path, monkeypatch)
    writers.step(10, 3.125, 4.25, 5.375)
    writers.step(20, 2.625, 3.75, 4.875)
    writers.close()

    def trainwatch(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "trainwatch", *args, str(tmp_path)], capture_output=True, text=True, check=True
        ).stdout

    summary = json.loads(trainwatch("summary", "--json"))
    assert {Path(s).name for s in summary["sources"]} == {"trainer_state.json", "metrics.csv"} | {
        p.name for p in (tmp_path / "tb").iterdir()
    }
    assert sorted(summary["formats"]) == ["lightning_csv", "tensorboard", "trainer_state"]
    assert summary["last_step"]  # each file's stream
    losses = sorted(json.dumps(latest) for latest in summary["latest"].values())
    for value in ("2.625", "3.75", "4.875"):
        assert any(value in text for text in losses), losses
    exported = [json.loads(line) for line in trainwatch("export").splitlines()]
    loss_by_file = {
        (Path(r["source"]).suffix or Path(r["source"]).name, r["step"]): r["metrics"]["loss"] for r in exported
    }
    assert loss_by_file[(".json", 20)] == 4.875
    assert loss_by_file[(".csv", 20)] == 3.75
