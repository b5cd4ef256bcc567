"""OpenMMLab logs. Sources: /work/shared/real_logs/mmengine__chg0901_openmmlab2-hong__frcnn_* (mmengine,
MMDet 3.x), open-mmlab/mmengine PR #155 (`Iter(train)`), open-mmlab/mmdetection issues #2672 and
#2785 (mmcv 1.x, `eta: 1 day, 16:21:05`), NJU-LHRS/official-CMID issue #5 (mmcv `Iter [200/21600]`)."""

from __future__ import annotations

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.mmengine import MMEngineParser
from trainwatch.records import Step


def test_epoch_train_line_global_iteration() -> None:
    text = (
        "2023/06/04 12:08:21 - mmengine - INFO - Epoch(train)  [2][ 1/86]  lr: 3.4634e-03  eta: 0:24:32  time: 0.3518  "
        "data_time: 0.0096  memory: 3494  loss: 0.3237  loss_rpn_cls: 0.0388  loss_rpn_bbox: 0.0171  loss_cls: 0.1232  "
        "acc: 98.4375  loss_bbox: 0.1447\n"
    )
    (s,) = run(MMEngineParser(), text)[0].steps
    assert s.step == 87
    assert s.data["metrics"] == {
        "lr": 3.4634e-03,
        "eta_s": 1472,
        "step_time_s": 0.3518,
        "data_time_s": 0.0096,
        "mem_gib": 3494 / 1024,
        "loss": 0.3237,
        "loss_rpn_cls": 0.0388,
        "loss_rpn_bbox": 0.0171,
        "loss_cls": 0.1232,
        "acc": 98.4375,
        "loss_bbox": 0.1447,
        "epoch": 2.0,
    }


def test_iter_train_and_mmcv_forms() -> None:
    text = (
        "04/22 11:14:42 - mmengine - INFO - Iter(train) [10/270]  lr: 1.000e-02  eta: 0:00:27  time: 0.004  data_time: 0.000  memory: 0  loss: 5.3294\n"
        "2020-05-21 04:01:24,249 - mmdet - INFO - Epoch [1][15/678]\tlr: 0.00020, eta: 1 day, 16:21:05, time: 1.269, data_time: 0.011, "
        "memory: 9581, loss_rpn_cls: 0.6986, loss_rpn_bbox: 0.2252, s0.loss_cls: 0.5666, s0.acc: 95.7031, loss: 3.4410\n"
        "2023-06-21 05:37:06,540 - mmseg - INFO - Iter [200/21600]\tlr: 9.998e-03, eta: 1:05:45, time: 0.141, data_time: 0.008, "
        "memory: 22159, decode.loss_ce: 1.2669, decode.acc_seg: 11.8965, aux.loss_ce: 0.4904, aux.acc_seg: 16.9658, loss: 1.7573\n"
    )
    a, b, c = run(MMEngineParser(), text)[0].steps
    assert (a.step, a.data["metrics"]["total_steps"], a.data["metrics"]["loss"]) == (10, 270.0, 5.3294)
    assert b.step == 15 and b.data["metrics"]["eta_s"] == 86400 + 16 * 3600 + 21 * 60 + 5
    assert b.data["metrics"]["s0_loss_cls"] == 0.5666 and b.data["metrics"]["loss"] == 3.4410
    assert (
        c.step == 200 and c.data["metrics"]["decode_loss_ce"] == 1.2669 and c.data["metrics"]["mem_gib"] == 22159 / 1024
    )


def test_validation_progress_is_not_training_and_metrics_land_on_last_step() -> None:
    records, pipeline = read(SAMPLES / "mmengine__frcnn_20230604_train_val.log")
    steps = [r for r in records if isinstance(r, Step)]
    # the checkpoint event between them keeps training and validation of step 430 in two records
    assert [s.step for s in steps] == [84, 85, 86, 87, 88, 430, 430]
    train, val = steps[-2:]
    assert train.metrics["loss"] == 0.1977 and train.metrics["step_time_s"] == 0.3526 and train.metrics["epoch"] == 5.0
    assert val.metrics == {
        "coco_bbox_m_ap": 0.4590,
        "coco_bbox_m_ap_50": 0.9670,
        "coco_bbox_m_ap_75": 0.3240,
        "coco_bbox_m_ap_s": -1.0,
        "coco_bbox_m_ap_m": -1.0,
        "coco_bbox_m_ap_l": 0.4590,
        "pascal_voc_m_ap": 0.9824,
        "pascal_voc_ap50": 0.9820,
    }  # no val timing as step time
    assert next(iter(pipeline.readers.values())).parser.stats.formats[0] == "mmengine"


def test_half_matches_yield_nothing() -> None:
    for text in (
        "2023/06/04 12:08:19 - mmengine - INFO - Exp name: faster_r_cnn_triangle_20230604_120745",
        "Epoch(train)  [1][87/86]  lr: 3.3433e-03  loss: 0.3238",  # i > n
        "Epoch [1][15/678]",
    ):
        assert run(MMEngineParser(), text + "\n")[0].steps == [], text
