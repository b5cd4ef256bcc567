"""nanoGPT family golden lines.

Sources: karpathy/nanoGPT issue #215 (timestamped iter lines, eval line, NaN loss), #178 (`mfu -100.00%`
sentinel), #110 (older `iter N: loss X, time Yms` without mfu); karpathy/nanochat PR #147 (step lines)
and PR #492 (`Step 16704 | CORE metric: 0.2633`); modded-nanogpt: /work/shared/real_logs/moddednanogpt__*
(AkramjitS/gpt-lab-diffusion train.log); llm.c: anthonix/llm.c issue #2 (NaN lines, AMD fork of llm.c)
and a public llm.c train_gpt2cu run log (fineweb, `step    1/21479 ...`), karpathy/llm.c PR #156
(CPU `step 0: train loss ... (took N ms)`).
"""

from __future__ import annotations

import math

import pytest
from _feed import events, feed, steps
from _pipeline import read, read_steps
from conftest import REAL_LOGS, SAMPLES

from trainwatch.parsers.formats.nanogpt import LlmcParser, ModdedNanoGPTParser, NanochatParser, NanoGPTParser


# ---------------------------------------------------------------- nanoGPT
def test_nanogpt_iter_line() -> None:
    # karpathy/nanoGPT#215
    (s,) = steps(feed(["2023-03-22 09:30:39 iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%"], [NanoGPTParser()]))
    assert s.step == 2920
    assert s.time == "2023-03-22T09:30:39"
    assert s.metrics == {"loss": 3.9883, "step_time_s": pytest.approx(1.09934), "mfu_pct": 15.34}


def test_nanogpt_mfu_sentinel_dropped_and_old_form() -> None:
    # karpathy/nanoGPT#178 (first iter has no MFU estimate yet) and #110 (no mfu field)
    got = steps(
        feed(
            ["iter 0: loss 4.2648, time 9371.81ms, mfu -100.00%", "iter 1631: loss 4.0863, time 561.94ms"],
            [NanoGPTParser()],
        )
    )
    assert got[0].metrics == {"loss": 4.2648, "step_time_s": pytest.approx(9.37181)}
    assert got[1].step == 1631 and got[1].metrics["loss"] == 4.0863


def test_nanogpt_eval_line_does_not_replace_iter_loss() -> None:
    # karpathy/nanoGPT#178
    got = steps(
        feed(
            ["iter 240: loss 1.6524, time 895.31ms, mfu 16.62%", "step 250: train loss 1.5440, val loss 1.7220"],
            [NanoGPTParser()],
        )
    )
    assert got[1].step == 250
    assert got[1].metrics == {"eval_loss": 1.7220, "eval_train_loss": 1.5440}


def test_nanogpt_sample_nan_event() -> None:
    records, _ = read(SAMPLES / "nanogpt__issue215_gpt2_nan.log")
    got = steps(records)
    assert got[0].step == 2920 and got[-1].step == 3060
    nan = events(records, "nan")
    assert nan and nan[0].step == 3010


# --------------------------------------------------------------- nanochat
def test_nanochat_step_line() -> None:
    # karpathy/nanochat PR #147
    line = "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13 | total time: 0.00m"
    (s,) = steps(feed([line], [NanochatParser()]))
    assert s.step == 4
    assert s.metrics == {
        "total_steps": 21400.0,
        "loss": 8.893647,
        "lrm": 1.0,
        "step_time_s": pytest.approx(0.98944),
        "tokens_per_s": 529882.0,
        "mfu_pct": 74.13,
        "total_time_s": 0.0,
    }


def test_nanochat_eval_summary_line() -> None:
    # karpathy/nanochat PR #492
    (s,) = steps(feed(["Step 16704 | CORE metric: 0.2633"], [NanochatParser()]))
    assert (s.step, s.metrics) == (16704, {"core_metric": 0.2633})


def test_nanochat_sample() -> None:
    got = read_steps(SAMPLES / "nanochat__pr147_a100.log")
    assert [s.step for s in got] == [4, 5, 6, 7, 8, 9, 10]
    assert got[-1].metrics["tokens_per_s"] == 525967.0


# ---------------------------------------------------------- modded-nanogpt
def test_modded_train_and_val_lines_merge() -> None:
    # /work/shared/real_logs/moddednanogpt__..._L7720-7732.log
    lines = [
        "step:1999/20000 train_loss:2.496552e-02 train_time:8854576ms step_avg:4429.50ms",
        "step:2000/20000 train_loss:2.652339e-02 train_time:8858907ms step_avg:4429.45ms",
        "Validating on 40960 tokens (10 steps with 4096 batch size)",
        "step:2000/20000 val_loss:2.4931e-02 train_time:8858907ms step_avg:4429.45ms",
    ]
    got = steps(feed(lines, [ModdedNanoGPTParser()]))
    assert [s.step for s in got] == [1999, 2000]
    assert "step_time_s" not in got[0].metrics  # no previous line to difference against
    last = got[1].metrics
    assert last["loss"] == pytest.approx(0.02652339)
    assert last["eval_loss"] == pytest.approx(0.024931)
    assert last["step_time_s"] == pytest.approx(4.331)  # (8858907 - 8854576) ms over one step
    assert last["step_avg_s"] == pytest.approx(4.42945)
    assert last["train_time_s"] == pytest.approx(8858.907)
    assert last["total_steps"] == 20000


def test_modded_real_log_start_has_val_at_step_zero() -> None:
    path = next(REAL_LOGS.glob("moddednanogpt__*_L1-4_L5698-5730.log"))
    got = read_steps(path)
    assert got[0].step == 0 and got[0].metrics["eval_loss"] == pytest.approx(10.826)
    assert [s.step for s in got[1:]] == list(range(1, 8))
    assert got[2].metrics["step_time_s"] == pytest.approx(4.951)  # 10980 - 6029 ms


def test_modded_sample_checkpoint_step() -> None:
    got = read_steps(SAMPLES / "moddednanogpt__gpt-lab-diffusion_val_checkpoint.log")
    by_step = {s.step: s for s in got}
    assert by_step[2000].metrics["eval_loss"] == pytest.approx(0.024931)
    assert max(by_step) == 2004


# ------------------------------------------------------------------- llm.c
def test_llmc_step_line() -> None:
    # public llm.c train_gpt2cu run log (fineweb 124M)
    line = "step    2/21479 | loss 10.829729 (+nanz)| norm 15.0011 (+nanz)| lr 5.71e-06 | 2391.52 ms | -100.0% bf16 MFU | 191824 tok/s"
    (s,) = steps(feed([line], [LlmcParser()]))
    assert s.step == 2
    assert s.metrics == {
        "loss": 10.829729,
        "grad_norm": 15.0011,
        "lr": 5.71e-06,
        "step_time_s": pytest.approx(2.39152),
        "tokens_per_s": 191824.0,
        "total_steps": 21479.0,
    }


def test_llmc_nan_and_mfu() -> None:
    # anthonix/llm.c#2
    line = "step   10/74 | loss     nan (+nanz)| norm    nan (+nanz)| lr 3.00e-04 | 36.58 ms | 9.2% bf16 MFU | 112241 tok/s"
    records = feed([line, "val loss nan"], [LlmcParser()])
    (step,) = steps(records)  # `val loss` belongs to the step printed before it: one record
    assert step.step == 10
    assert math.isnan(step.metrics["loss"]) and math.isnan(step.metrics["grad_norm"])
    assert math.isnan(step.metrics["eval_loss"])
    assert step.metrics["mfu_pct"] == 9.2
    assert {e.data["metric"] for e in events(records, "nan")} == {"loss", "grad_norm", "eval_loss"}


def test_llmc_cpu_form() -> None:
    # karpathy/llm.c PR #156
    (s,) = steps(feed(["step 3: train loss 3.885524 (took 2453 ms)"], [LlmcParser()]))
    assert (s.step, s.metrics) == (3, {"loss": 3.885524, "step_time_s": 2.453})


def test_llmc_sample() -> None:
    got = read_steps(SAMPLES / "llmc__train_gpt2cu_fineweb.log")
    assert [s.step for s in got] == [None, 1, 2, 3, 4]
    assert got[0].metrics == {"eval_loss": 11.006021}


# --------------------------------------------------------------- negatives
@pytest.mark.parametrize(
    "line",
    [
        "iter 3000: loss 4.2490, time 35392.33ms, mfu",  # truncated
        "step:0/20000 val_loss:1.0826e+01 train_time:0ms step_avg:nanms extra",  # bad token
        "Running with 1 GPU",
        "  --train_steps = 20000",
        "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.8",  # torchtune, not nanochat
    ],
)
def test_family_ignores_other_lines(line: str) -> None:
    parsers = [NanoGPTParser(), NanochatParser(), ModdedNanoGPTParser(), LlmcParser()]
    assert steps(feed([line], parsers)) == []
