"""detectron2 metric lines. Sources: facebookresearch/d2go issues #524 and #19, facebookresearch/detectron2
issue #195, ChenhongyiYang/QueryDet-PyTorch issue #17 (`] d2.utils.events INFO:` form),
fpv-iplab/DA-RetinaNet issue #7 (first line without eta/time)."""

from __future__ import annotations

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.detectron2 import Detectron2Parser
from trainwatch.records import Step


def test_line_forms() -> None:
    text = (
        "[11/01 11:27:04 d2.utils.events]: eta: 8:05:12  iter: 1259  total_loss: 1.012  loss_cls: 0.714  loss_box_reg: 0.291  "
        "time: 0.3322  data_time: 0.0334  lr: 0.010000  max_mem: 3961M\n"
        "[04/14 09:05:02] d2.utils.events INFO:  eta: 0:11:54  iter: 119  total_loss: 9.214  loss_cls: 2.549  loss_box_reg: 1.002  "
        "loss_query: 5.513  time: 0.8153  data_time: 0.0220  lr: 0.001199  max_mem: 28515M\n"
        "[11/17 01:18:50 d2.utils.events]:  iter: 18  total_loss: 2.855  loss_cls: 1.732  loss_box_reg: 0.812  loss_r3: 0.08665  "
        "loss_r4: 0.08379  loss_r5: 0.1808     lr: 3.7964e-06  max_mem: 22645M\n"
    )
    a, b, c = run(Detectron2Parser(), text)[0].steps
    assert a.step == 1259
    assert a.data["metrics"] == {
        "eta_s": 8 * 3600 + 5 * 60 + 12,
        "loss": 1.012,
        "loss_cls": 0.714,
        "loss_box_reg": 0.291,
        "step_time_s": 0.3322,
        "data_time_s": 0.0334,
        "lr": 0.01,
        "max_mem_gib": 3961 / 1024,
    }
    assert b.step == 119 and b.data["metrics"]["loss_query"] == 5.513
    assert c.step == 18 and "step_time_s" not in c.data["metrics"] and c.data["metrics"]["max_mem_gib"] == 22645 / 1024


def test_half_matches_yield_nothing() -> None:
    for text in (
        "[03/15 07:47:57 d2.engine.train_loop]: Starting training from iteration 0",
        "[11/01 11:27:51 d2.utils.events]",
        "[11/01 11:27:51 d2.utils.events]: eta: 8:05:12  iter: 1399",  # no values
    ):
        assert run(Detectron2Parser(), text + "\n")[0].steps == [], text


def test_pipeline_on_sample() -> None:
    records, pipeline = read(SAMPLES / "detectron2__d2go_issue19_warmup.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [19, 39, 59, 79, 99]
    assert [s.metrics["loss"] for s in steps] == [1.475, 1.383, 1.339, 1.348, 1.163]
    assert next(iter(pipeline.readers.values())).parser.stats.formats == ["detectron2"]


def test_fastreid_epoch_and_global_iteration() -> None:
    """fast-reid's fork of the printer: `epoch/iter: 1/399` is the epoch, then the global iteration."""
    from _feed import feed, steps

    got = steps(
        feed(
            [
                "[04/14 20:16:08 fastreid.utils.events]:  eta: 0:37:59  epoch/iter: 0/257  total_loss: 56.73  lr: 0.00035",
                "[04/14 20:16:30 fastreid.utils.events]:  eta: 0:37:54  epoch/iter: 1/399  total_loss: 55.97  lr: 0.00035",
            ]
        )
    )
    assert [(s.step, s.metrics["epoch"], s.metrics["loss"]) for s in got] == [(257, 0.0, 56.73), (399, 1.0, 55.97)]
