"""LitGPT golden lines. Sources: Lightning-AI/litgpt issue #1110 (finetune, `(step)` marker),
#1607 (pretraining with gradient accumulation and remaining time), #1224 (older lines without marker)."""

from __future__ import annotations

import pytest
from _feed import feed, steps
from _pipeline import read_steps
from conftest import SAMPLES

from trainwatch.parsers.formats.litgpt import LitGPTParser


def test_pretrain_line_with_accumulation_and_eta() -> None:
    # Lightning-AI/litgpt#1607
    line = "Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20 ms (step) remaining time: 0:01:54"
    (s,) = steps(feed([line], [LitGPTParser()]))
    assert s.step == 610140
    assert s.metrics == {
        "loss": 2.846,
        "epoch": 34.0,
        "iter_time_s": pytest.approx(0.1122),
        "eval_loss": 2.861,
        "eta_s": 114,
    }


def test_unmarked_lines_emit_last_of_each_step() -> None:
    # Lightning-AI/litgpt#1224
    lines = [
        "Epoch 1 | iter 46 step 1 | loss train: 3.724, val: n/a | iter time: 45.73 ms",
        "Epoch 1 | iter 47 step 1 | loss train: 3.737, val: n/a | iter time: 45.53 ms",
        "Epoch 1 | iter 48 step 2 | loss train: 3.730, val: n/a | iter time: 47.63 ms",
    ]
    got = steps(feed(lines, [LitGPTParser()]))
    assert [(s.step, s.line, s.metrics["loss"]) for s in got] == [(1, 2, 3.737), (2, 3, 3.730)]
    assert "eval_loss" not in got[0].metrics


def test_sample_finetune_tail() -> None:
    got = read_steps(SAMPLES / "litgpt__issue1110_lora_last_epoch.log")
    assert [s.step for s in got] == [961, 962, 963, 964, 965]
    assert got[0].metrics["step_time_s"] == pytest.approx(0.52946)
    assert got[-1].metrics["epoch"] == 5


def test_other_lines_ignored() -> None:
    assert steps(feed(["Training time: 583.36s", "Memory used: 14.49 GB"], [LitGPTParser()])) == []
