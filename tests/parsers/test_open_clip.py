"""open_clip / EVA-CLIP progress lines, golden. Every line is real; its source is named beside it.

Sources:
  seed002  ../shared/seeds/002_* (EVA-CLIP CoCa with DeepSpeed: `Global Steps: N`, sub-losses, Loss Scaler)
  sc11     github.com/x-cls/superclass/issues/11 (open_clip 2.2x: `/s/gpu`, `Contrastive_loss`)
  bows27   github.com/mertyg/vision-language-models-are-bows/issues/27 (2023 open_clip fork, NegCLIP)
"""

from __future__ import annotations

from collections.abc import Iterable

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats.open_clip import OpenClipParser
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Record, Step


def run(lines: Iterable[str]) -> list[Step]:
    records: list[Record] = []
    runner = SourceParser("t.log", [OpenClipParser()], records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    runner.finish()
    return [r for r in records if isinstance(r, Step)]


SEED002_STEP1 = (
    "2024-02-20,09:55:01 | INFO | Global Steps: 1 Train Epoch: 0 [    2048/12202117 (0%)] Loss: 29.341 (29.34) "
    "Loss(CLIP): 7.7311 (7.731) Loss(CoCa): 21.609 (21.61) Grad Norm: 4.9168 (4.917) Loss Scaler: 65536. (6.554e+04) "
    "LR: 0.000000 LR_visual: 0.000000 LR_text: 0.000000 LR_text_decoder: 0.000000 Logit Scale: 14.299 Data (t): "
    "18.972 Batch (t): 38.165, 53.6611/s"
)


def test_eva_line_with_global_steps_and_sub_losses() -> None:
    (s,) = run([SEED002_STEP1])
    assert (s.step, s.time) == (1, "2024-02-20T09:55:01")
    assert dict(s.metrics) == {
        "epoch": 0,
        "num_samples": 2048,
        "samples_per_epoch": 12202117,
        "loss": 29.341,  # the current value, not the running average in parentheses
        "loss_clip": 7.7311,
        "loss_coca": 21.609,
        "grad_norm": 4.9168,
        "loss_scale": 65536.0,
        "lr": 0.0,
        "lr_visual": 0.0,
        "lr_text": 0.0,
        "lr_text_decoder": 0.0,
        "logit_scale": 14.299,
        "data_time_s": 18.972,
        "step_time_s": 38.165,
        "samples_per_s": 53.6611,
    }


def test_later_eva_line() -> None:
    line = (  # seed002 line 6864
        "2024-02-20,10:44:03 | INFO | Global Steps: 1601 Train Epoch: 0 [ 3278848/12202117 (27%)] Loss: 24.314 "
        "(27.33) Loss(CLIP): 2.8593 (5.764) Loss(CoCa): 21.454 (21.57) Grad Norm: 11.969 (9.655) Loss Scaler: 32768. "
        "(4.433e+04) LR: 0.000004 LR_visual: 0.000160 LR_text: 0.000016 LR_text_decoder: 0.000016 Logit Scale: 29.917 "
        "Data (t): 0.001 Batch (t): 1.800, 966.353/s"
    )
    (s,) = run([line])
    assert s.step == 1601
    assert (s.metrics["loss"], s.metrics["lr"], s.metrics["loss_scale"]) == (24.314, 4e-06, 32768.0)
    assert s.metrics["samples_per_s"] == 966.353


def test_plain_open_clip_has_no_step_and_keeps_per_gpu_rate() -> None:
    lines = [  # sc11, two consecutive lines: two records, never merged
        "2024-11-28,04:39:18 | INFO | Train Epoch: 0 [400564224/512000000 (78%)] Data (t): 12.822 Batch (t): 14.049, "
        "1781.07/s, 222.633/s/gpu LR: 0.000057 Logit Scale: 81.228 Contrastive_loss: 0.66678 (1.6251) Loss: 0.66678 "
        "(1.6251)",
        "2024-11-28,04:49:13 | INFO | Train Epoch: 0 [401612800/512000000 (78%)] Data (t): 1.091 Batch (t): 4.644, "
        "1802.44/s, 225.305/s/gpu LR: 0.000056 Logit Scale: 81.293 Contrastive_loss: 0.51701 (1.6222) Loss: 0.51701 "
        "(1.6222)",
    ]
    a, b = run(lines)
    assert (a.step, b.step) == (None, None)
    assert dict(a.metrics) == {
        "epoch": 0,
        "num_samples": 400564224,
        "samples_per_epoch": 512000000,
        "data_time_s": 12.822,
        "step_time_s": 14.049,
        "samples_per_s": 1781.07,
        "samples_per_s_per_gpu": 222.633,
        "lr": 5.7e-05,
        "logit_scale": 81.228,
        "contrastive_loss": 0.66678,
        "loss": 0.66678,
    }
    assert (b.metrics["loss"], b.time) == (0.51701, "2024-11-28T04:49:13")


def test_2023_form_with_trailing_tag() -> None:
    line = (  # bows27
        "2023-06-29,15:44:40 | INFO | Train Epoch: 0 [    64/109468 (0%)] Loss: 1.0672 (1.067) Data (t): 14.173 Batch "
        "(t): 18.240, 1.75441/s LR: 0.000000 Logit Scale: 100.000 - V4"
    )
    (s,) = run([line])
    assert dict(s.metrics) == {
        "epoch": 0,
        "num_samples": 64,
        "samples_per_epoch": 109468,
        "loss": 1.0672,
        "data_time_s": 14.173,
        "step_time_s": 18.24,
        "samples_per_s": 1.75441,
        "lr": 0.0,
        "logit_scale": 100.0,
    }


SEED002_TOTAL = "2024-02-20,09:54:22 | INFO | total_steps: 1191600"  # seed002 line 2020 (EVA's config)


def test_total_steps_is_the_run_length_of_the_steps_not_a_step_record() -> None:
    runner_records: list[Record] = []
    runner = SourceParser("t.log", [OpenClipParser()], runner_records.append)
    runner.feed_lines([Line(2020, SEED002_TOTAL), Line(2021, "2024-02-20,09:54:22 | INFO | Start epoch 0")])
    runner.finish()
    assert runner_records == []  # the announcement alone is no step
    assert runner.stats.understood == 1
    steps = run([SEED002_TOTAL, SEED002_STEP1, SEED002_STEP1.replace("Global Steps: 1 ", "Global Steps: 2 ")])
    assert [(s.step, s.line, s.metrics["total_steps"]) for s in steps] == [(1, 2, 1191600), (2, 3, 1191600)]
    assert all(s.step is not None for s in steps)


def test_half_matching_lines_yield_nothing() -> None:
    lines = [
        # the params dump, not the announcement (seed002 style `|   key: value`, bows27 line)
        "2023-07-14,07:17:28 | INFO |   batch_size: 128",
        # a header with no values after it (seed002 line 2025 cut after the bracket)
        "2024-02-20,09:55:01 | INFO | Global Steps: 1 Train Epoch: 0 [    2048/12202117 (0%)]",
        # seed002 line 2021
        "2024-02-20,09:54:22 | INFO | Start epoch 0",
    ]
    assert run(lines) == []


def test_a_value_that_is_not_a_number_is_left_out() -> None:
    # seed002 line 2025 with its Grad Norm value cut by a terminal wrap (as in pasted logs)
    line = SEED002_STEP1.replace("Grad Norm: 4.9168 (4.917)", "Grad Norm: 4.91 68 (4.917)")
    (s,) = run([line])
    assert "grad_norm" not in s.metrics
    assert s.metrics["loss_scale"] == 65536.0
