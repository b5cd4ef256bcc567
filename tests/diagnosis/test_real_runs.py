"""`summary --json` on real logs whose truth is known: the right status and exactly the right findings.

Each log is copied to a temp dir with its mtime an hour ago (the file stopped growing an hour
ago, whatever the checkout time), so `stalled` means what a user would see the next morning.
Sources and truths:
- mmengine__runner_cpu_{healthy,slow_dataset,diverging_lr}.log: real mmengine 0.10.7 `Runner` runs on
  CPU (sample_logs/generators/mmengine_slow_data.py): healthy; `__getitem__` sleeping 10 ms per
  sample with num_workers=0 (data_time 0.16 s of a 0.17 s iteration); the lr multiplied by 1.1
  every iteration, so the loss climbs, spikes to 1043 at iteration 66, is inf at 68, nan after.
- lightning__cpu_simple_profiler_{healthy,slow_dataset}.log: real Lightning 2.6 `Trainer.fit` on CPU
  with the SimpleProfiler (sample_logs/generators/lightning_slow_data.py), healthy and with a
  dataset sleeping 5 ms per sample (train_dataloader_next 89% of the fit).
- megatron__llm_action_llama_fp16_overflow_storm.log: Megatron-DeepSpeed LLaMA fp16 pretraining
  pasted in liguodongiot/llm-action train/megatron-deepspeed/microsoft/llama-note.md: 1586 of 2500
  steps skipped for overflows, loss scale 32768 -> 1, `[after training is done]`.
- deepspeed__hf_issue14531_t5_scale_at_minimum.log: huggingface/transformers issue #14531, T5-11B
  with DeepSpeed ZeRO-2: `Attempted loss scale: 1, reducing to 1` on every step, each note glued
  after the Trainer's bar (`100/24128 [...]`): the bar gives the step and total, and the excerpt
  was written long ago, so it is stalled at step 100 (its torn last bar is not a step).
- ranks__torchrun_tee3_crash.log / ranks__torchrun_tee3_straggler.log: real torchrun runs
  (sample_logs/generators/make_rank_samples.sh): rank 3 raises at iteration 8; rank 2 sleeps
  50 ms in data loading every step.
- deepspeed__coca_4rank_zero1_sighup.log and seed 002: the open_clip CoCa run killed by SIGHUP.
- seed 004 / megatron__gpt2_deepspeed.log: a healthy GPT-2 log that just stops (no end marker).
- nanogpt__issue215_gpt2_nan.log: karpathy/nanoGPT issue #215, the loss turns nan at step 3010
  and the paste stops.
- mmengine__frcnn_20230604_train_val.log: a healthy MMDet run, trimmed mid-run.
- seed 000: a Lightning SimpleProfiler report of a compute-bound run (training batch 94%).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SAMPLES, seed

from trainwatch.cli import main

CASES: list[tuple[str, str, set[str]]] = [
    ("mmengine__runner_cpu_healthy.log", "finished", set()),
    ("mmengine__runner_cpu_slow_dataset.log", "finished", {"dataloader_bound"}),
    ("mmengine__runner_cpu_diverging_lr.log", "finished", {"loss_spike", "nan"}),
    ("lightning__cpu_simple_profiler_healthy.log", "finished", set()),
    ("lightning__cpu_simple_profiler_slow_dataset.log", "finished", {"dataloader_bound"}),
    ("megatron__llm_action_llama_fp16_overflow_storm.log", "finished", {"overflow_storm"}),
    ("deepspeed__hf_issue14531_t5_scale_at_minimum.log", "stalled", {"overflow_storm", "stall"}),
    ("ranks__torchrun_tee3_crash.log", "crashed", {"crash"}),
    ("ranks__torchrun_tee3_straggler.log", "finished", {"straggler", "dataloader_bound"}),
    ("deepspeed__coca_4rank_zero1_sighup.log", "crashed", {"crash"}),
    ("megatron__gpt2_deepspeed.log", "stalled", {"stall"}),
    ("nanogpt__issue215_gpt2_nan.log", "stalled", {"stall", "nan"}),
    ("mmengine__frcnn_20230604_train_val.log", "stalled", {"stall"}),
    ("seed:000", "unknown", set()),
    ("seed:002", "crashed", {"crash"}),
    ("seed:004", "stalled", {"stall", "overfitting"}),  # issue 22: validation loss rises from ~8k
]


def _path(name: str) -> Path:
    return seed(name.removeprefix("seed:")) if name.startswith("seed:") else SAMPLES / name


def _summary(name: str, tmp_path: Path) -> dict[str, Any]:
    src = _path(name)
    copy = tmp_path / (src.name if src.suffix == ".log" else f"{src.stem}.log")
    shutil.copyfile(src, copy)
    an_hour_ago = time.time() - 3600
    os.utime(copy, (an_hour_ago, an_hour_ago))
    result = CliRunner().invoke(main, ["summary", "--json", str(copy)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _finding(data: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [f for f in data["findings"] if f["kind"] == kind]
    return found


@pytest.mark.parametrize(("name", "status", "kinds"), CASES, ids=[c[0] for c in CASES])
def test_real_log_status_and_exactly_its_findings(name: str, status: str, kinds: set[str], tmp_path: Path) -> None:
    data = _summary(name, tmp_path)
    assert data["status"] == status, data["reason"]
    got = [f["kind"] for f in data["findings"]]
    assert sorted(got) == sorted(kinds), [f["message"] for f in data["findings"]]
    for f in data["findings"]:
        assert f["message"] and f["remedy"] and f["message"].endswith(f["remedy"])


def test_slow_datasets_say_how_much_and_what_to_do(tmp_path: Path) -> None:
    mm = _finding(_summary("mmengine__runner_cpu_slow_dataset.log", tmp_path), "dataloader_bound")
    assert mm["message"].startswith("96% of the step is data loading (0.16s of 0.17s, data time)")
    assert "num_workers" in mm["remedy"]
    lt = _finding(_summary("lightning__cpu_simple_profiler_slow_dataset.log", tmp_path), "dataloader_bound")
    assert lt["message"].startswith("89% of the profiled time is data loading")
    assert "[_TrainingEpochLoop].train_dataloader_next" in lt["message"]


def test_healthy_controls_finish_at_their_configured_length(tmp_path: Path) -> None:
    mm = _summary("mmengine__runner_cpu_healthy.log", tmp_path)
    assert mm["total_steps"] == 80 and mm["reason"] == "reached step 80 of 80 and saved its final checkpoint"
    lt = _summary("lightning__cpu_simple_profiler_healthy.log", tmp_path)
    assert lt["reason"] == "`Trainer.fit` stopped: `max_epochs=2` reached. (step 80)"


def test_diverging_run_names_the_first_inf_step_and_the_spike(tmp_path: Path) -> None:
    data = _summary("mmengine__runner_cpu_diverging_lr.log", tmp_path)
    nan = _finding(data, "nan")
    assert nan["steps"] == [68] and nan["message"].startswith("loss first became NaN/inf at step 68")
    spike = _finding(data, "loss_spike")
    assert 66 in spike["steps"] and "loss jumped to 1043 at step 66" in spike["message"]
    assert max(spike["steps"]) < 68  # the inf/nan values are the nan finding, not spikes


def test_overflow_storms_quote_the_log(tmp_path: Path) -> None:
    mega = _finding(_summary("megatron__llm_action_llama_fp16_overflow_storm.log", tmp_path), "overflow_storm")
    assert "DeepSpeed skipped 1586 of 2500 steps for overflows" in mega["message"]
    assert "loss scale fell from 32768 to 1" in mega["message"]
    t5 = _finding(_summary("deepspeed__hf_issue14531_t5_scale_at_minimum.log", tmp_path), "overflow_storm")
    assert t5["message"].startswith("4 fp16 overflows at the minimum loss scale 1") and t5["ranks"] == [0]


def test_crash_names_the_rank_that_raised(tmp_path: Path) -> None:
    crash = _finding(_summary("ranks__torchrun_tee3_crash.log", tmp_path), "crash")
    assert crash["ranks"] == [3] and crash["steps"] == [7]
