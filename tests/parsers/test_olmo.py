"""OLMo multi-line metric blocks. Source: allenai/OLMo issue #692 ("why CrossEntropyLoss is zero")."""

from __future__ import annotations

import pytest
from _feed import feed, steps
from _pipeline import read_steps
from conftest import SAMPLES

from trainwatch.parsers.formats.olmo import OlmoParser

BLOCK = [
    "2024-08-06 10:00:05.520 intern-studio-160750:0  olmo.train:908  INFO    [step=2/739328,epoch=0]",
    "    optim/total_grad_norm=0.0002",
    "    train/CrossEntropyLoss=1.7872662283480167e-06",
    "    train/Perplexity=1.000",
    "    throughput/total_tokens=2,097,152",
    "    throughput/device/tokens_per_second=26,668",
    "    System/Peak GPU Memory (MB)=53,695",
]


def test_block_is_one_step_at_its_header() -> None:
    (s,) = steps(feed(BLOCK, [OlmoParser()]))
    assert s.step == 2
    assert s.line == 1
    assert s.time == "2024-08-06T10:00:05.520"
    assert s.metrics["loss"] == pytest.approx(1.7872662283480167e-06)
    assert s.metrics["grad_norm"] == 0.0002
    assert s.metrics["train_perplexity"] == 1.0
    assert s.metrics["throughput_total_tokens"] == 2097152
    assert s.metrics["tokens_per_s_per_gpu"] == 26668
    assert s.metrics["max_mem_gib"] == pytest.approx(53695e6 / 1024**3)
    assert s.metrics["total_steps"] == 739328 and s.metrics["epoch"] == 0


def test_block_ends_at_next_unindented_line() -> None:
    lines = [*BLOCK[:3], "Saving checkpoint...", "    train/CrossEntropyLoss=9.9"]
    (s,) = steps(feed(lines, [OlmoParser()]))
    assert set(s.metrics) == {"total_steps", "epoch", "grad_norm", "loss"}
    assert s.metrics["loss"] == pytest.approx(1.7872662283480167e-06)


def test_indented_lines_without_header_are_ignored() -> None:
    assert steps(feed(BLOCK[1:], [OlmoParser()])) == []


def test_sample_three_steps() -> None:
    got = read_steps(SAMPLES / "olmo__issue692_zero_loss.log")
    assert [s.step for s in got] == [1, 2, 3]
    assert [s.line for s in got] == [1, 9, 19]
    assert got[0].metrics["loss"] == 12.18
    assert got[2].metrics["loss"] == 0.0
    assert "max_mem_gib" not in got[2].metrics  # the paste ends before that line
