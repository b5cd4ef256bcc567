"""Composer / llm-foundry console blocks.

Source: aws-samples awsome-distributed-training, MPT test case README ("it should produce a log output
similar to the below", `srun -l` prefixed) and mosaicml/composer issue #2357 (metric names).
"""

from __future__ import annotations

from _feed import feed, steps
from _pipeline import read_steps
from conftest import SAMPLES

from trainwatch.parsers.formats.composer import ComposerParser


def test_sample_block_with_srun_prefix() -> None:
    (s,) = read_steps(SAMPLES / "composer__awsome_distributed_mpt7b.log")
    assert s.step == 1
    assert s.rank == 0
    assert s.line == 1
    assert s.metrics["loss"] == 12.0
    # 300,000,000 is a token budget, not a step count (issue 22): never the step total
    assert "total_steps" not in s.metrics
    assert s.metrics["duration_budget"] == 300000000
    assert s.metrics["memory_allocated_mem"] == 3.6287
    assert s.metrics["metrics_train_language_perplexity"] == 162754.5
    assert s.metrics["time_batch"] == 0


def test_block_closes_on_next_header() -> None:
    lines = [
        "[batch=1/10]:",
        "\t Train time/batch: 0",
        "\t Train loss/train/total: 11.6525",
        "[batch=2/10]:",
        "\t Train time/batch: 1",
        "\t Train loss/train/total: 10.1",
    ]
    got = steps(feed(lines, [ComposerParser()]))
    assert [(s.step, s.metrics["loss"]) for s in got] == [(1, 11.6525), (2, 10.1)]


def test_metric_lines_without_header_are_ignored() -> None:
    assert steps(feed(["\t Train loss/train/total: 11.6525"], [ComposerParser()])) == []
