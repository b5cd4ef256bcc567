"""torchtune golden lines. Sources: meta-pytorch/torchtune PR #2605 (peak memory fields, XPU run),
PR #1358 (loss/lr/tokens only), PR #640 (older `gpu_resources` field)."""

from __future__ import annotations

import pytest
from _feed import feed, steps
from _pipeline import read_steps
from conftest import SAMPLES

from trainwatch.parsers.formats.torchtune import TorchtuneParser


def test_line_with_memory() -> None:
    # meta-pytorch/torchtune PR #2605
    line = "Step 3 | loss:1.1229164600372314 lr:2e-05 tokens_per_second_per_gpu:177.71878051757812 peak_memory_active:26.27274227142334 peak_memory_alloc:14.558753967285156 peak_memory_reserved:28.7265625"
    (s,) = steps(feed([line], [TorchtuneParser()]))
    assert s.step == 3
    assert s.metrics == {
        "loss": pytest.approx(1.1229164600372314),
        "lr": 2e-05,
        "tokens_per_s_per_gpu": pytest.approx(177.71878051757812),
        "peak_memory_active": pytest.approx(26.27274227142334),
        "max_mem_gib": pytest.approx(14.558753967285156),
        "peak_memory_reserved": 28.7265625,
    }


def test_older_lines() -> None:
    # meta-pytorch/torchtune PR #1358 and PR #640
    got = steps(
        feed(
            [
                "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174",
                "Step 2 | loss:1.5729001760482788 lr:2e-05 gpu_resources:40627453440 ",
            ],
            [TorchtuneParser()],
        )
    )
    assert got[0].metrics["tokens_per_s_per_gpu"] == pytest.approx(57.828881833956174)
    assert got[1].metrics["gpu_resources"] == 40627453440


def test_sample() -> None:
    got = read_steps(SAMPLES / "torchtune__pr2605_xpu_full_finetune.log")
    assert [s.step for s in got] == [1, 2, 3, 4, 5]


def test_not_torchtune() -> None:
    # karpathy/nanochat PR #492 summary line: a different family
    assert steps(feed(["Step 16704 | CORE metric: 0.2633"], [TorchtuneParser()])) == []
