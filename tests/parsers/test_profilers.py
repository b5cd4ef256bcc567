"""Profiler reports -> `profile` records (Lightning, torch.profiler, DeepSpeed flops profiler).

Samples: sample_logs/lightning__simple_profiler.log = seed 000, sample_logs/torch_profiler__moe_table.log =
seed 001; other tables are lines pasted in public issues or docs, noted per test.
"""

from __future__ import annotations

import pytest
from _feed import feed
from _pipeline import read
from conftest import SAMPLES

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats.flops_profiler import FlopsProfilerParser
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Phases, Profile, Record, to_dict


def _profiles(records: list[Record]) -> list[Profile]:
    return [r for r in records if isinstance(r, Profile)]


def _row(profile: Profile, name: str) -> dict:
    (row,) = [r for r in profile.rows if r["name"] == name]
    return dict(row)


# ----------------------------------------------------------------------------------------- Lightning
def test_seed_000_simple_profiler_matches_the_contract_example() -> None:
    records, _ = read(SAMPLES / "lightning__simple_profiler.log")
    (profile,) = _profiles(records)
    assert (profile.title, profile.kind, profile.line) == ("FIT Profiler Report", "lightning_simple", 3)
    assert _row(profile, "run_training_epoch") == {
        "name": "run_training_epoch",
        "mean_duration_s": 3.5012,
        "num_calls": 500,
        "total_time_s": 1750.6,
        "percentage_pct": 98.676,
    }
    assert _row(profile, "Total") == {"name": "Total", "total_time_s": 1774.1, "percentage_pct": 100}
    assert len(profile.rows) == 41  # Total + 40 actions
    assert _row(profile, "on_train_dataloader")["mean_duration_s"] == 4.1879e-06
    assert to_dict(profile)["rows"][1]["num_calls"] == 500


def test_framed_layout_lightning_1_6_and_later() -> None:
    # Lightning-AI/pytorch-lightning#15785 (rows) with the header and rules SimpleProfiler.summary() prints.
    lines = [
        "FIT Profiler Report",
        "",
        "-" * 120,
        "|  Action                                    \t|  Mean duration (s)\t|  Num calls      \t|  Total time (s) \t|  Percentage %   \t|",
        "-" * 120,
        "|  Total                                     \t|  -              \t|  28             \t|  2.9278         \t|  100 %          \t|",
        "-" * 120,
        "|  [Callback]ModelSummary.on_train_start      \t|  1.7e-05        \t|  1              \t|  1.7e-05        \t|  0.00058065     \t|",
        "|  [Callback]ModelSummary.on_train_end        \t|  1.5459e-05     \t|  1              \t|  1.5459e-05     \t|  0.00052801     \t|",
        "-" * 120,
        "Epoch 1: 100%|██████████| 98/98 [00:11<00:00, 8.25it/s, v_num=0]",
    ]
    (profile,) = _profiles(feed(lines))
    assert profile.title == "FIT Profiler Report"
    assert [r["name"] for r in profile.rows] == [
        "Total",
        "[Callback]ModelSummary.on_train_start",
        "[Callback]ModelSummary.on_train_end",
    ]
    assert _row(profile, "Total") == {"name": "Total", "num_calls": 28, "total_time_s": 2.9278, "percentage_pct": 100}
    assert _row(profile, "[Callback]ModelSummary.on_train_end")["percentage_pct"] == 0.00052801


def test_lightning_0_x_layout_without_calls() -> None:
    # Lightning-AI/pytorch-lightning#15785 (quoting the 0.7.1 docs)
    lines = [
        "Profiler Report",
        "",
        "Action                  |  Mean duration (s)    |  Total time (s)",
        "-----------------------------------------------------------------",
        "on_epoch_start          |  5.993e-06            |  5.993e-06",
        "get_train_batch         |  0.0087412            |  16.398",
        "model_forward           |  0.0017818            |  3.3408",
        "",
        "Epoch 2",
    ]
    (profile,) = _profiles(feed(lines))
    assert profile.title == "Profiler Report"
    assert _row(profile, "get_train_batch") == {
        "name": "get_train_batch",
        "mean_duration_s": 0.0087412,
        "total_time_s": 16.398,
    }
    assert len(profile.rows) == 3


def test_advanced_profiler_cprofile_tables() -> None:
    # Lightning-AI/pytorch-lightning#782 (AdvancedProfiler output, one table per action)
    lines = [
        "Profile stats for: get_train_batch",
        "         4869394 function calls (4863767 primitive calls) in 19.107 seconds",
        "",
        "   Ordered by: cumulative time",
        "",
        "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)",
        "3752/1876    0.012    0.000   19.100    0.010 {built-in method builtins.next}",
        "     1876    0.008    0.000   19.090    0.010 dataloader.py:344(__next__)",
        "    60000    1.797    0.000   18.408    0.000 mnist.py:80(__getitem__)",
        "",
        "",
        "Profile stats for: on_batch_start",
        "         23 function calls in 0.000 seconds",
    ]
    records = feed(lines)
    first, *_ = _profiles(records)
    assert (first.title, first.kind, first.line) == ("Profile stats for: get_train_batch", "lightning_advanced", 1)
    assert first.rows[0] == {
        "name": "{built-in method builtins.next}",
        "ncalls": 3752,
        "primitive_calls": 1876,
        "tottime_s": 0.012,
        "tottime_percall_s": 0.0,
        "cumtime_s": 19.1,
        "cumtime_percall_s": 0.01,
    }
    assert _row(first, "mnist.py:80(__getitem__)")["tottime_s"] == 1.797
    assert len(first.rows) == 3
    assert len(_profiles(records)) == 1  # the second table has no rows


# ---------------------------------------------------------------------------------- torch.profiler
def test_seed_001_torch_profiler_table() -> None:
    records, _ = read(SAMPLES / "torch_profiler__moe_table.log")
    (profile,) = _profiles(records)
    assert (profile.kind, profile.line) == ("torch_profiler", 1)
    assert len(profile.rows) == 84
    assert _row(profile, "train_step-0") == {
        "name": "train_step-0",
        "self_cpu_pct": 0.17,
        "self_cpu_s": 0.01398,
        "cpu_total_pct": 47.17,
        "cpu_total_s": 3.916,
        "cpu_time_avg_s": 3.916,
        "self_cuda_s": 0.0,
        "self_cuda_pct": 0.0,
        "cuda_total_s": 0.046271,
        "cuda_time_avg_s": 0.046271,
        "calls": 1,
    }
    assert _row(profile, "cudaEventCreateWithFlags")["self_cpu_s"] == pytest.approx(140e-6)
    assert _row(profile, "nccl:_all_gather_base")["cpu_total_pct"] == 0  # printed as a bare `0`
    assert _row(profile, "Optimizer.step#Adam.step")["calls"] == 1


def test_a_dashed_line_alone_is_not_a_table() -> None:
    lines = ["-----  -----", "Epoch 1  loss 0.5", "----------  ----------", "100%  done"]
    assert _profiles(feed(lines)) == []


# --------------------------------------------------------------------------- DeepSpeed flops profiler
FLOPS_BERT = """\
-------------------------- DeepSpeed Flops Profiler --------------------------
Profile Summary at step 10:
Notations:
data parallel size (dp_size), model parallel size(mp_size),
number of parameters (params), number of multiply-accumulate operations(MACs),
number of floating-point operations (flops), floating-point operations per second (FLOPS),
fwd latency (forward propagation latency), bwd latency (backward propagation latency),
step (weights update latency), iter latency (sum of fwd, bwd and step latency)

world size:                                                   1
data parallel size:                                           1
model parallel size:                                          1
batch size per GPU:                                           80
params per gpu:                                               336.23 M
params of model = params per GPU * mp_size:                   336.23 M
fwd MACs per GPU:                                             3139.93 G
fwd flops per GPU:                                            6279.86 G
fwd flops of model = fwd flops per GPU * mp_size:             6279.86 G
fwd latency:                                                  76.67 ms
bwd latency:                                                  108.02 ms
fwd FLOPS per GPU = fwd flops per GPU / fwd latency:          81.9 TFLOPS
bwd FLOPS per GPU = 2 * fwd flops per GPU / bwd latency:      116.27 TFLOPS
fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):   102.0 TFLOPS
step latency:                                                 34.09 us
iter latency:                                                 184.73 ms
samples/second:                                               433.07

----------------------------- Aggregated Profile per GPU -----------------------------
Top modules in terms of params, MACs or fwd latency at different model depths:
depth 0:
    params      - {'BertForPreTrainingPreLN': '336.23 M'}"""


def test_deepspeed_flops_profiler_summary() -> None:
    # microsoft/DeepSpeed docs/_tutorials/flops-profiler.md (BERT-Large on A100)
    records = feed(FLOPS_BERT.splitlines())
    (profile,) = _profiles(records)
    assert (profile.kind, profile.step, profile.line) == ("deepspeed_flops", 10, 2)
    (row,) = profile.rows
    assert row["world_size"] == 1
    assert row["batch_size_per_gpu"] == 80
    assert row["params_per_gpu"] == pytest.approx(336.23e6)
    assert row["fwd_flops_per_gpu"] == pytest.approx(6279.86e9)
    assert row["fwd_latency_s"] == pytest.approx(0.07667)
    assert row["fwd_flops_per_gpu_tflops"] == 81.9
    assert row["fwd_bwd_flops_per_gpu_tflops"] == 102.0
    assert row["iter_latency_s"] == pytest.approx(0.18473)
    assert row["samples_per_second"] == 433.07
    (phases,) = [r for r in records if isinstance(r, Phases)]
    assert phases.step == 10
    assert phases.phases_s == pytest.approx({"forward": 0.07667, "backward": 0.10802, "step": 34.09e-6})


def test_flops_summary_that_never_gives_numbers_does_not_swallow_the_log() -> None:
    # deepspeedai/DeepSpeed#2565 pasted the summary with srun's `0: ` label on every line; the runner
    # does not strip that label, so no number is read here, and the following lines stay free.
    lines = [f"0: {text}" if text else "0:" for text in FLOPS_BERT.splitlines()[:12]]
    lines += ["[Rank 0] rank=0 time (ms) | forward: 361.46 | backward: 1035.58"] * 3  # seed 002
    records: list[Record] = []
    runner = SourceParser("t.log", [FlopsProfilerParser()], records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    runner.finish()
    assert records == []
    assert runner.stats.understood <= 12  # the three DeepSpeed timer lines were not taken
