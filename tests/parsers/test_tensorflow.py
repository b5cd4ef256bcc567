"""TensorFlow 1.x Estimator logging. Sources: tensorflow/tensorflow issue #43014 (train_and_evaluate) and
tensorflow/tensor2tensor issue #106 (model diverged), kept in tests/corpus/tensorflow/ with their provenance."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _feed import events, feed, steps
from _pipeline import read

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "tensorflow"


def test_loss_lines_give_steps_and_the_step_time_is_per_step() -> None:
    got = steps(
        feed(
            [
                "INFO:tensorflow:loss = 96.96749, step = 0",
                "INFO:tensorflow:global_step/sec: 0.803895",
                "INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)",
                "INFO:tensorflow:global_step/sec: 0.81",
                "INFO:tensorflow:loss = 3.9, step = 200 (123.45 sec)",
            ]
        )
    )
    assert [(s.step, s.metrics["loss"]) for s in got] == [(0, 96.96749), (100, 4.264659), (200, 3.9)]
    assert "step_time_s" not in got[0].metrics
    assert got[1].metrics["step_time_s"] == pytest.approx(1.24394)


def test_diverged_run_gives_checkpoint_and_nan() -> None:
    records, _ = read(CORPUS / "t2t_model_diverged_nan_issue106.log")
    assert [e.step for e in events(records, "checkpoint")] == [31622]
    assert [e.data for e in events(records, "nan")] == [{"metric": "loss"}]
    last = steps(records)[-1]
    assert last.step == 31601 and last.metrics["loss"] == 1.8717 and not math.isnan(last.metrics["loss"])
