"""Line forms of held-out logs read at stop 36 (each case names its source): a banner's planned steps,
a rate over the logging interval, a learning rate with its scheduler named, a `Dev:` evaluation, a
count of batches in Chinese, a best-so-far mark, an epoch header a loop prints without Keras, the
tutorial's and an early stop's end of training."""

from __future__ import annotations

import pytest
from _feed import events, feed, steps

from trainwatch.parsers.fields import read_fields

_PADDLE = "\x1b[32m[2022-08-31 15:07:02,181] [    INFO]\x1b[0m - "


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_a_banners_planned_steps_are_no_counter_and_the_evaluation_after_them_is_the_last_steps() -> None:
    # PaddlePaddle/PaddleNLP (its Trainer, FewCLUE): the evaluation banner between a step and its eval line
    got = _steps(
        [
            _PADDLE + "loss: 0.60361495, learning_rate: 2.97e-05, global_step: 2150, interval_runtime: 5.6625, "
            "interval_samples_per_second: 11.303, interval_steps_per_second: 1.766, epoch: 0.3512",
            _PADDLE + "loss: 0.51201382, learning_rate: 2.97e-05, global_step: 2200, interval_runtime: 5.6849, "
            "interval_samples_per_second: 11.258, interval_steps_per_second: 1.759, epoch: 0.3594",
            _PADDLE + "***** Running Evaluation *****",
            _PADDLE + "  Num examples = 12241",
            _PADDLE + "  Total prediction steps = 192",
            _PADDLE + "eval_loss: 0.5414647459983826, eval_accuracy: 0.7857, eval_runtime: 54.9523, epoch: 0.3594",
        ]
    )
    assert [s for s, _ in got] == [2150, 2200]
    assert got[0][1]["samples_per_s"] == 11.303
    assert got[0][1]["step_time_s"] == pytest.approx(1 / 1.766)
    assert got[1][1]["eval_loss"] == 0.5414647459983826 and got[1][1]["loss"] == 0.51201382
    for text in ("  Total optimization steps = 1000", "  Num train steps: 500", "Number of warmup steps = 10"):
        reading = read_fields(text)
        assert reading is None or reading.step is None, text
    counted = read_fields("Total Steps: 5000 | reward: 1.5")  # (RL: the run's step, no phase named)
    assert counted is not None and counted.step == 5000


def test_a_learning_rate_with_its_scheduler_named_is_the_learning_rate() -> None:
    # PaddlePaddle/PaddleClas issue #3203: `lr(PiecewiseDecay): 0.00100000`
    reading = read_fields(
        "[2024/07/31 20:24:32] ppcls INFO: [Train][Epoch 24/120][Iter: 0/304]lr(PiecewiseDecay): 0.00100000, "
        "top1: 1.00000, CELoss: 0.01757, loss: 0.01757, batch_cost: 0.61280s, reader_cost: 0.12493, "
        "ips: 26.10981 samples/s, eta: 5:01:10"
    )
    assert reading is not None
    assert reading.metrics["lr"] == 0.001 and reading.metrics["loss"] == 0.01757
    assert reading.metrics["step_time_s"] == 0.6128 and reading.metrics["samples_per_s"] == 26.10981
    other = read_fields("step 3 loss (avg): 0.5")  # (an average's aside is not a scheduler's)
    assert other is not None and "lr" not in other.metrics


def test_a_dev_line_after_a_training_line_is_the_evaluation() -> None:
    # a Tsinghua NLP homework's TextCNN (committed log, CRLF): `Train: Batch[100] - ...` then `Dev: loss: ...`
    lines = []
    for n, (tr, dev) in enumerate([(0.707424, 0.650118), (0.524731, 0.622117), (0.563207, 0.635190)], 1):
        lines += [f"Train: Batch[{n}00] - loss: {tr} acc: 59.38%)\r", f"Dev: loss: {dev} acc: 61.73%)\r"]
    got = _steps(lines)
    by_step: dict[int | None, dict[str, float]] = {}
    for step, metrics in got:
        by_step.setdefault(step, {}).update(metrics)
    assert by_step[200]["loss"] == 0.524731 and by_step[200]["eval_loss"] == 0.622117
    assert by_step[300]["eval_loss"] == 0.635190
    device = read_fields("dev 0 loss: 0.5")  # (a device's number is no evaluation)
    assert device is not None and "eval_loss" not in device.metrics


def test_a_count_of_batches_in_chinese_is_the_batch_counter() -> None:
    # a Chinese NLP study repo: `Batch 个数 50, 当前Batch Loss: 2.48` (count of batches, the current batch's loss)
    reading = read_fields("Batch 个数 50, 当前Batch Loss: 2.48036789894104")
    assert reading is not None
    assert reading.inner == 50 and reading.metrics == {"loss": 2.48036789894104}


def test_a_best_so_far_mark_keeps_the_lines_shape() -> None:
    # 649453932/Chinese-Text-Classification-Pytorch: `*` after the line whose validation improved
    got = _steps(
        [
            "Iter:   2200,  Train Loss:  0.13,  Train Acc: 94.53%,  Val Loss:  0.21,  Val Acc: 93.45%,  Time: 0:30:31 *",
            "Iter:   2300,  Train Loss:  0.13,  Train Acc: 94.53%,  Val Loss:  0.22,  Val Acc: 93.33%,  Time: 0:31:54",
            "Iter:   2400,  Train Loss: 0.099,  Train Acc: 96.88%,  Val Loss:  0.22,  Val Acc: 93.43%,  Time: 0:33:15",
        ]
    )
    assert [s for s, _ in got] == [2200, 2300, 2400]
    assert got[0][1]["eval_loss"] == 0.21


def test_an_epoch_header_without_keras_bars_numbers_the_lines_under_it() -> None:
    # zjZSTU/YOLO_v1 (PyTorch's fine-tuning tutorial loop): `Epoch 42/49`, a rule, `train Loss: 0.2172`
    lines = []
    for epoch, loss in ((42, 0.2172), (43, 0.2442), (44, 0.1925)):
        lines += [f"Epoch {epoch}/49", "----------", f"train Loss: {loss}", ""]
    got = _steps(lines)
    assert [(m["epoch"], m["loss"]) for _, m in got] == [(42, 0.2172), (43, 0.2442), (44, 0.1925)]


def test_a_keras_log_still_reads_its_epoch_headers_once() -> None:
    got = _steps(
        [
            "Epoch 1/2",
            "2/2 [==============================] - 0s 5ms/step - loss: 0.5",
            "Epoch 2/2",
            "2/2 [==============================] - 0s 5ms/step - loss: 0.4",
        ]
    )
    assert got == [
        (2, {"loss": 0.5, "epoch": 1.0, "step_time_s": 0.005}),
        (4, {"loss": 0.4, "epoch": 2.0, "step_time_s": 0.005}),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Training complete in 2m 30s",
        "Training SqueezeNetBypass complete in 96m 21s",
        "no optimization for a long time, early stop....",
        "Early stopping triggered.",
        "Early stopping at epoch 12",
    ],
)
def test_the_tutorials_end_and_an_early_stop_finish_the_run(line: str) -> None:
    recs = feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line])
    assert len(events(recs, "finished")) == 1


@pytest.mark.parametrize(
    "line", ["early_stopping_patience = 10", "EarlyStopping counter: 3 out of 10", "Use early stopping: True"]
)
def test_an_early_stop_setting_or_counter_is_no_end(line: str) -> None:
    recs = feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line])
    assert events(recs, "finished") == []
