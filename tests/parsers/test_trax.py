"""Trax's training.Loop, read from the README's notebook output (tests/corpus/trax): each step's rows
are one record, the step time is the block's seconds over its steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pipeline import read

from trainwatch.records import Step

LOG = Path(__file__).resolve().parents[1] / "corpus" / "trax" / "readme_loop_step_metric_pipe_rows.log"


def test_the_loops_report_is_one_step_per_block() -> None:
    records, _ = read(LOG)
    got = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in got] == [1, 500, 1000, 1500, 2000]
    assert got[0].metrics == {
        "step_time_s": 0.78,
        "loss": 1.33800304,
        "eval_loss": 0.71843582,
        "eval_weighted_category_accuracy": 0.565625,
    }
    assert got[2].metrics["step_time_s"] == pytest.approx(5.03 / 500)
    assert [s.metrics["loss"] for s in got] == [1.33800304, 0.62914723, 0.42949259, 0.41843575, 0.38129005]


def test_rows_of_other_shapes_are_not_trax(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("Epoch 3: train loss | 0.5\nStep 5: Ran 0 train steps in 1.0 secs\n", encoding="utf-8")
    records, _ = read(log)
    assert not [r for r in records if isinstance(r, Step) and "eval_weighted_category_accuracy" in r.metrics]
    assert not [r for r in records if isinstance(r, Step) and r.metrics.get("step_time_s") == 1.0]
