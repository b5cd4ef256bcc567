"""The field reader on the labels and line forms particular frameworks print (each case names its source)."""

from __future__ import annotations

import pytest
from _feed import feed, steps


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_mingpt_iter_dt_is_the_step_time() -> None:
    # karpathy/minGPT projects/chargpt: print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: ...")
    got = _steps(["iter_dt 7797.46ms; iter 2: train loss 2.60938", "iter_dt 5743.34ms; iter 4: train loss 2.49033"])
    assert got == [
        (2, {"step_time_s": pytest.approx(7.79746), "loss": 2.60938}),
        (4, {"step_time_s": pytest.approx(5.74334), "loss": 2.49033}),
    ]


def test_paddle_costs_and_an_eta_with_days() -> None:
    # PaddlePaddle/Paddle issue #34297 (PaddleDetection) and PaddlePaddle/PaddleOCR issue #16562
    det = _steps(
        [
            "[07/21 14:40:44] ppdet.engine INFO: Epoch: [0] [  0/200] learning_rate: 0.000000 loss: 5331.523438 "
            "eta: 27 days, 22:18:02 batch_cost: 18.5622 data_cost: 17.9648 ips: 1.7239 images/s",
            "[07/21 14:43:00] ppdet.engine INFO: Epoch: [0] [ 20/200] learning_rate: 0.000025 loss: 1037.630493 "
            "eta: 10 days, 19:39:33 batch_cost: 6.6231 data_cost: 6.0753 ips: 4.8315 images/s",
        ]
    )
    assert det[1] == (
        20,
        {
            "lr": 2.5e-05,
            "loss": 1037.630493,
            "step_time_s": 6.6231,
            "data_time_s": 6.0753,
            "samples_per_s": 4.8315,
            "epoch": 0.0,
        },
    )
    ocr = _steps(
        [
            f"[2025/09/24 12:13:19] ppocr INFO: epoch: [3/500], global_step: {n}, lr: 0.005000, loss: 0.609742, "
            f"avg_reader_cost: 1.81036 s, avg_batch_cost: 2.03538 s, ips: 7.86095 samples/s, eta: 2 days, 20:01:28"
            for n in (500, 600)
        ]
    )
    assert [s for s, _ in ocr] == [500, 600]
    assert {k: ocr[0][1][k] for k in ("step_time_s", "data_time_s", "samples_per_s")} == {
        "step_time_s": 2.03538,
        "data_time_s": 1.81036,
        "samples_per_s": 7.86095,
    }
    assert "eta" not in ocr[0][1]


def test_imagenet_first_batch_with_unpadded_averages_is_the_same_progress_line() -> None:
    # ROCm/pytorch issue #1147 (pytorch/examples imagenet ProgressMeter): `( 4.022)` pads, `(60.000)` does not
    got = _steps(
        [
            "Epoch: [0][   1/1424]   Time 60.000 (60.000)    Data 15.133 (15.133)    Loss 6.9078e+00 (6.9078e+00)",
            "Epoch: [0][  21/1424]   Time  1.175 ( 4.022)    Data  0.001 ( 0.722)    Loss 6.8997e+00 (6.9054e+00)",
        ]
    )
    assert [(s, m["step_time_s"], m["data_time_s"], m["loss"]) for s, m in got] == [
        (1, 60.0, 15.133, 6.9078),
        (21, 1.175, 0.001, 6.8997),
    ]
