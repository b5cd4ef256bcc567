"""Ultralytics YOLO (v8+) and YOLOv5 training table: a header, one tqdm row per epoch, a validation row.

          Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size
        151/200      10.4G     0.4635     0.2344      0.805       1578        640: 100%|██████████| 99/99 [01:52<00:00,  1.14s/it]
                     Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|██████████| 32/32 [00:16<00:00,  1.93it/s]
                       all        498      70099      0.937      0.905      0.941       0.82

Columns come from the header (segment/pose/obb/classify print other losses). Step is the
batch count since the start of training, `(epoch - 1) x batches + i`: Ultralytics' own `ni`
("number of integrated batches") plus one. `GPU_mem` is `memory_reserved() / 1e9` -> `mem_gib`.
The losses are running means over the epoch so far, as printed; Ultralytics prints no total
loss, so none is reported. The validation `all` row is reported at the last training step as
`val_images`, `val_instances`, `box_precision`, `box_recall`, `box_map50`, `box_map50_95`
(`mask_*`, `pose_*` for the other heads).

YOLOv5 prints the same table with an `obj` loss column, 0-based epochs (`0/99` is the first of
100), so its step is `epoch x batches + i`; before v7 its header says `gpu_mem`, `labels`,
`img_size` and its validation `Labels P R mAP@.5 mAP@.5:.95`; from v7 its bar has no rate
(`| 1849/1849 13:15`). A NaN/inf loss column (the run diverged) is a `nan` event: the runner
watches a term of the loss when no total is printed.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.formats._tqdm import find_bar

_HEADER = re.compile(r"^\s*Epoch\s+(?i:gpu_mem)\s+(?P<cols>[A-Za-z_ ]+?)\s*$")
_VAL_HEADER = re.compile(r"^\s*Class\s+Images\s+(?:Instances|Labels|Targets)\s+(?P<cols>.*?):\s+\d{1,3}%")
# YOLOv5 v7's bar format `{l_bar}{bar:10}| {n_fmt}/{total_fmt} {elapsed}`: no brackets, no rate.
_V5_BAR = re.compile(
    r"^(?P<desc>.*?):\s*\d{1,3}%\|[^|]*\|\s*(?P<n>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d))\s+\d{1,9}(?::\d{2}){1,2}\s*$"
)
_EPOCH = re.compile(r"^(\d{1,18}(?!\d))/(\d{1,18}(?!\d))$")
_ALL = re.compile(r"^\s*all\s+(?P<values>[\d.\s]+?)\s*$")
# YOLOv5 before v7 (and YOLOv3) name columns by what they hold; `total` is the sum of the losses.
_V5_COLUMNS = {
    "box": "box_loss",
    "obj": "obj_loss",
    "cls": "cls_loss",
    "gio_u": "giou_loss",  # `GIoU`
    "total": "loss",
    "labels": "instances",
    "targets": "instances",
    "img_size": "size",
}
_VAL_NAMES = {
    "P": "precision",
    "R": "recall",
    "mAP50": "map50",
    "mAP50-95": "map50_95",
    "mAP@.5": "map50",
    "mAP@.5:.95": "map50_95",
}


def _val_columns(cols: str) -> list[str] | None:
    """`Box(P R mAP50 mAP50-95)` -> box_precision ... ; two heads: `Box(P ... Mask(P ...`; YOLOv5's
    `P R mAP@.5 mAP@.5:.95` names no head: boxes."""
    names: list[str] = []
    head = "" if "(" in cols else "box"
    for token in cols.replace(")", " ").split():
        if "(" in token:
            head, _, token = token.partition("(")
            head = snake(head)
        short = _VAL_NAMES.get(token)
        if short is None or not head:
            return None
        names.append(f"{head}_{short}")
    return names or None


class UltralyticsParser(Parser):
    name = "ultralytics"
    title = "Ultralytics YOLO"
    triggers = ("GPU_mem", "gpu_mem", "%|", "Instances", "all ")
    example = "      1/100      3.65G      1.234      2.345      1.456         32        640: 100%|██████████| 12/12 [00:05<00:00,  2.21it/s]"
    priority = 100
    samples = (
        Sample(  # ultralytics/ultralytics issue #2023: YOLOv8 epoch row and its validation row
            "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
            "    151/200      10.4G     0.4635     0.2344      0.805       1578        640: 100%|██████████| 99/99 "
            "[01:52<00:00,  1.14s/it]\n"
            "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
            "100%|██████████| 32/32 [00:16<00:00,  1.93it/s]\n"
            "                   all        498      70099      0.937      0.905      0.941       0.82\n",
            steps=(
                (
                    14949,
                    {
                        "box_loss": 0.4635,
                        "cls_loss": 0.2344,
                        "dfl_loss": 0.805,
                        "mem_gib": 10.4e9 / 2**30,
                        "epoch": 151,
                    },
                ),
                (14949, {"box_precision": 0.937, "box_recall": 0.905, "box_map50": 0.941, "box_map50_95": 0.82}),
            ),
        ),
        Sample(  # ultralytics/yolov5 issue #4963: a YOLOv5 epoch whose losses are nan
            " Epoch   gpu_mem       box       obj       cls    labels  img_size\n"
            "      1/99     2.64G         nan       nan       nan         4       416: 100%|██████████| 7/7 "
            "[00:15<00:00,  2.27s/it]\n"
            "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: "
            "100%|██████████| 1/1 [00:01<00:00,  1.30s/it]\n"
            "                 all               14          0             0          0            0              0\n",
            steps=((14, {"step_time_s": 2.27, "epoch": 1}),),
            events=("nan",),
        ),
    )

    def __init__(self) -> None:
        self._cols: list[str] | None = None
        self._val_cols: list[str] | None = None
        self._last_step: int | None = None  # the runner's last_step lags while it merges
        self._first_epoch = 1  # YOLOv5 counts epochs from 0

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _HEADER.match(text)
        if m:
            self._cols = [_V5_COLUMNS.get(snake(c), snake(c)) for c in m.group("cols").split()]
            self._first_epoch = 0 if "obj_loss" in self._cols else 1
            return True
        m = _VAL_HEADER.match(text)
        if m:
            self._val_cols = _val_columns(m.group("cols"))
            return self._val_cols is not None
        if self._val_cols is not None:
            m = _ALL.match(text)
            if m:
                return self._val_row(m.group("values").split(), out)
        if self._cols is None:
            return False
        bar = find_bar(text)
        if bar is not None:
            desc, n, total, seconds_per_it = bar.desc, bar.n, bar.total, bar.seconds_per_it
        else:
            v5 = _V5_BAR.match(text)
            if v5 is None:
                return False
            desc, n, total, seconds_per_it = v5.group("desc"), int(v5.group("n")), int(v5.group("total")), None
        if total <= 0 or n > total:
            return False
        tokens = desc.split()
        if len(tokens) != 2 + len(self._cols):
            return False
        em = _EPOCH.match(tokens[0])
        if em is None:
            return False
        epoch = int(em.group(1))
        metrics: dict[str, float] = {"epoch": float(epoch)}
        mem = parse_mem_gib(tokens[1])
        if mem is not None:
            metrics["mem_gib"] = mem
        for name, raw in zip(self._cols, tokens[2:], strict=True):
            value = parse_number(raw)
            if value is None:
                return False
            metrics[name] = value
        if seconds_per_it is not None:
            metrics["step_time_s"] = seconds_per_it
        if n > 0:
            self._last_step = (epoch - self._first_epoch) * total + n
            out.step(self._last_step, metrics)  # (a NaN loss column: the runner's `nan` event, once a step)
        return True

    def _val_row(self, values: list[str], out: Emitter) -> bool:
        cols = self._val_cols or []
        if len(values) != 2 + len(cols):
            return False
        numbers = [parse_number(v) for v in values]
        if any(v is None for v in numbers):
            return False
        names = ["val_images", "val_instances", *cols]
        out.step(self._last_step, {n: v for n, v in zip(names, numbers, strict=True) if v is not None})
        return True
