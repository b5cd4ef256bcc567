"""torchtitan golden lines.

Sources: pytorch/torchtitan PR #1287 (step lines without grad_norm, `[rank0]:` prefix),
PR #3393 (grad_norm, 2026), PR #2389 (no rank prefix, 8 ranks printing the same step).
"""

from __future__ import annotations

import pytest
from _feed import events, feed, steps
from _pipeline import read
from conftest import SAMPLES

from trainwatch.parsers.formats.torchtitan import TorchTitanParser


def test_step_line_with_rank_prefix() -> None:
    # pytorch/torchtitan PR #1287
    line = "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%"
    (step,) = steps(feed([line], [TorchTitanParser()]))
    assert step.step == 200
    assert step.rank == 0
    assert step.time == "2025-06-16T22:30:50.322"
    assert step.metrics == {
        "loss": 6.1384,
        "mem_gib": 49.66,
        "mem_pct": 52.28,
        "tokens_per_s_per_gpu": 5856.0,
        "tflops": 339.16,
        "mfu_pct": 34.29,
    }


def test_grad_norm_form() -> None:
    # pytorch/torchtitan PR #3393
    line = "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%"
    (step,) = steps(feed([line], [TorchTitanParser()]))
    assert step.step == 14
    assert step.metrics["grad_norm"] == pytest.approx(0.8319)
    assert step.metrics["loss"] == pytest.approx(3.24405)
    assert step.metrics["mem_gib"] == pytest.approx(9.46)


def test_unprefixed_lines_of_every_rank() -> None:
    # pytorch/torchtitan PR #2389: every rank prints its step line without a prefix
    # (whether near-duplicates merge is the runner's call; each line is a step-4 report)
    lines = [
        "[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: 26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.71  mfu: 13.99%",
        "[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: 26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.69  mfu: 13.99%",
        "[titan] 2026-02-24 19:46:19,145 - root - INFO - step:  5  loss:  7.07623  grad_norm: 46.5000  memory: 66.91GiB(37.51%)  tps: 10,007  tflops: 313.36  mfu: 13.93%",
    ]
    got = steps(feed(lines, [TorchTitanParser()]))
    assert sorted({s.step for s in got}) == [4, 5]
    assert got[0].metrics["tflops"] == 314.71
    assert got[-1].metrics["grad_norm"] == 46.5


def test_non_step_titan_lines_are_not_steps() -> None:
    # pytorch/torchtitan PR #1287
    lines = [
        "[rank0]:[titan] 2025-06-16 22:30:48,735 - root - INFO - [GC] Peforming periodical GC collection. 0.06 seconds.",
        "[rank0]:[titan] 2025-06-16 22:30:50,758 - root - INFO - Dumping profiler traces at step 200",
    ]
    parser = TorchTitanParser()
    assert steps(feed(lines, [parser])) == []


def test_sample_through_pipeline() -> None:
    path = SAMPLES / "torchtitan__pr1287_dcp_llama3.log"
    records, pipeline = read(path)
    got = steps(records)
    assert [s.step for s in got] == [200, 210, 220, 230, 240, 250]
    assert {s.rank for s in got} == {0}
    assert got[-1].metrics["mfu_pct"] == 34.33
    assert events(records, "nan") == []
    assert pipeline.store.sources[str(path)].formats[0] == "torchtitan"


def test_padded_and_stampless_lines_read_as_before_and_a_space_run_without_step_is_not_read() -> None:
    """The spaces after `[titan]` are taken whole (no retry from each of them): a step line whose
    ` - step:` starts inside them still reads, a long run of spaces without `step:` is no step."""
    lines = [
        "[titan]  - step: 5  loss:  2.0000",
        "[titan]" + " " * 5000 + "- INFO - nothing here",
        "[titan] 2025-06-16 22:30:50,322 -" + " " * 3000 + "- step: 6  loss:  1.5000",
    ]
    got = steps(feed(lines, [TorchTitanParser()]))
    assert [(s.step, s.metrics["loss"]) for s in got] == [(5, 2.0), (6, 1.5)]
