"""Ultralytics training table. Sources: ultralytics/ultralytics issues #2023 (sample) and #7653,
PR #16851 (OBB run, `1024` image size)."""

from __future__ import annotations

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.ultralytics import UltralyticsParser
from trainwatch.records import Step

HEADER = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"


def test_row_and_validation() -> None:
    text = HEADER + (
        "    44/1000      6.73G      1.145     0.5266       1.11          6        640: 100%|██████████| 16/16 [00:06<00:00,  2.65it/s]\n"
        "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|██████████| 8/8 [00:03<00:00,  2.28it/s]\n"
        "                   all        722       1444      0.992      0.987      0.994      0.671\n"
    )
    rec, understood = run(UltralyticsParser(), text)
    assert understood == [True, True, True, True]
    row, val = rec.steps
    assert row.step == 43 * 16 + 16
    assert row.data["metrics"] == {
        "epoch": 44.0,
        "mem_gib": 6.73e9 / 1024**3,
        "box_loss": 1.145,
        "cls_loss": 0.5266,
        "dfl_loss": 1.11,
        "instances": 6.0,
        "size": 640.0,
        "step_time_s": 1 / 2.65,
    }
    assert val.step == row.step
    assert val.data["metrics"] == {
        "val_images": 722.0,
        "val_instances": 1444.0,
        "box_precision": 0.992,
        "box_recall": 0.987,
        "box_map50": 0.994,
        "box_map50_95": 0.671,
    }


def test_half_matches_yield_nothing() -> None:
    for text in (
        "    44/1000      6.73G      1.145     0.5266       1.11          6        640: 100%|██████████| 16/16 [00:06<00:00,  2.65it/s]\n",  # no header
        HEADER
        + "    44/1000      6.73G      1.145     0.5266          6        640: 100%|██████████| 16/16 [00:06<00:00,  2.65it/s]\n",  # a column short
        HEADER + "                   all        722       1444      0.992\n",  # no validation header
        HEADER + "  0%|          | 0/1441 [00:00<?, ?it/s]\n",
    ):
        assert run(UltralyticsParser(), text)[0].steps == [], text


def test_pipeline_on_sample() -> None:
    records, pipeline = read(SAMPLES / "ultralytics__issue2023_multigpu.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [150 * 99 + 99, 151 * 99 + 99, 152 * 99 + 99]
    assert [s.metrics["box_map50_95"] for s in steps] == [0.82, 0.82, 0.821]
    assert [s.metrics["box_loss"] for s in steps] == [0.4635, 0.463, 0.4639]
    assert next(iter(pipeline.readers.values())).parser.stats.formats == ["ultralytics"]
