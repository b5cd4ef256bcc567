"""open_clip and its EVA-CLIP / CoCa descendants: `Train Epoch: ...` progress lines.

    Global Steps: 1 Train Epoch: 0 [    2048/12202117 (0%)] Loss: 29.341 (29.34) ... Batch (t): 38.165, 53.6611/s
    Train Epoch: 0 [  16384/3200000 (1%)] Data (t): 0.1 Batch (t): 0.5, 4096.0/s, 1024.0/s/gpu LR: 0.000 ...

The step is EVA's `Global Steps: N`. Plain open_clip prints no step number (only samples seen in
the epoch), so its records have `step: null` rather than a number derived from a batch size the
line does not state; the sample counter is kept as `num_samples` / `samples_per_epoch`.
`Label: value (running avg)` pairs keep the current value. A `Loss(CoCa)` style label keeps its
parenthesised part whole (`loss_coca`, not camel-split).

EVA announces the run length once (`| INFO | total_steps: 1191600`) before its first step. That
line is not a step: it emits nothing itself, and every progress record after it carries
`total_steps`, as Megatron's `iteration 100/ 1000` lines do (the run length summary and the
progress bar use).
"""

from __future__ import annotations

import re
from typing import ClassVar

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEADER = re.compile(
    r"(?:\bGlobal Steps: (?P<step>\d{1,18}(?!\d)) )?\bTrain Epoch: (?P<epoch>\d{1,18}(?!\d)) "
    r"\[\s*(?P<done>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d)) \(\d+%\)\]"
)
_PAIR = re.compile(
    r"(?<!\S)(?P<label>[A-Za-z]\w*(?: [A-Za-z]\w*)*(?:\s?\([A-Za-z]+\))?):\s+(?P<value>[^\s,]+)"
    r"(?P<rates>(?:,\s*[^\s,]+/s(?:/gpu)?)*)(?:\s+\((?P<avg>[^()\s]+)\))?"
    # what follows a value is the next label, a `- tag`, or the end: a stray number means a damaged value
    r"(?=\s*$|\s+[A-Za-z-])"
)
_RATE = re.compile(r",\s*(?P<value>[^\s,]+)/s(?P<gpu>/gpu)?")
_PAREN = re.compile(r"\s?\((\w+)\)")
_TOTAL_STEPS = re.compile(r"^\d{4}-\d{2}-\d{2},\d{2}:\d{2}:\d{2} \| INFO \| total_steps: (?P<n>\d{1,18}(?!\d))\s*$")


def _label_name(label: str) -> str:
    return metric_name(_PAREN.sub(lambda m: "_" + m.group(1).lower(), label))


class OpenClipParser(Parser):
    name: ClassVar[str] = "open_clip"
    title: ClassVar[str] = "open_clip / EVA-CLIP"
    triggers: ClassVar[tuple[str, ...]] = ("Train Epoch: ", "total_steps: ")
    example: ClassVar[str] = (
        "2024-02-20,09:55:01 | INFO | Global Steps: 1 Train Epoch: 0 [    2048/12202117 (0%)] Loss: 29.341 (29.34) "
        "Grad Norm: 4.9168 (4.917) Loss Scaler: 65536. (6.554e+04) LR: 0.000000 Data (t): 18.972 Batch (t): 38.165, 53.6611/s"
    )
    priority: ClassVar[int] = 100
    samples: ClassVar[tuple[Sample, ...]] = (
        Sample(  # seed 002 (EVA-CLIP CoCa), lines 2020, 2021 and 2025 (DeepSpeed's timer lines between left out)
            "2024-02-20,09:54:22 | INFO | total_steps: 1191600\n"
            "2024-02-20,09:54:22 | INFO | Start epoch 0\n"
            "2024-02-20,09:55:01 | INFO | Global Steps: 1 Train Epoch: 0 [    2048/12202117 (0%)] Loss: 29.341 "
            "(29.34) Loss(CLIP): 7.7311 (7.731) Loss(CoCa): 21.609 (21.61) Grad Norm: 4.9168 (4.917) Loss Scaler: "
            "65536. (6.554e+04) LR: 0.000000 LR_visual: 0.000000 LR_text: 0.000000 LR_text_decoder: 0.000000 Logit "
            "Scale: 14.299 Data (t): 18.972 Batch (t): 38.165, 53.6611/s\n",
            steps=(
                (
                    1,
                    {
                        "total_steps": 1191600,
                        "epoch": 0,
                        "num_samples": 2048,
                        "samples_per_epoch": 12202117,
                        "loss": 29.341,
                        "loss_clip": 7.7311,
                        "loss_coca": 21.609,
                        "grad_norm": 4.9168,
                        "loss_scale": 65536,
                        "lr": 0.0,
                        "logit_scale": 14.299,
                        "data_time_s": 18.972,
                        "step_time_s": 38.165,
                        "samples_per_s": 53.6611,
                    },
                ),
            ),
        ),
        Sample(  # x-cls/superclass issue #11 (open_clip 2.2x): no step number, a per-GPU rate
            "2024-11-28,04:39:18 | INFO | Train Epoch: 0 [400564224/512000000 (78%)] Data (t): 12.822 Batch (t): "
            "14.049, 1781.07/s, 222.633/s/gpu LR: 0.000057 Logit Scale: 81.228 Contrastive_loss: 0.66678 (1.6251) "
            "Loss: 0.66678 (1.6251)\n"
            "2024-11-28,04:49:13 | INFO | Train Epoch: 0 [401612800/512000000 (78%)] Data (t): 1.091 Batch (t): "
            "4.644, 1802.44/s, 225.305/s/gpu LR: 0.000056 Logit Scale: 81.293 Contrastive_loss: 0.51701 (1.6222) "
            "Loss: 0.51701 (1.6222)\n",
            steps=(
                (
                    None,
                    {
                        "epoch": 0,
                        "num_samples": 400564224,
                        "samples_per_epoch": 512000000,
                        "data_time_s": 12.822,
                        "step_time_s": 14.049,
                        "samples_per_s": 1781.07,
                        "samples_per_s_per_gpu": 222.633,
                        "lr": 5.7e-05,
                        "contrastive_loss": 0.66678,
                        "loss": 0.66678,
                    },
                ),
                (None, {"num_samples": 401612800, "step_time_s": 4.644, "lr": 5.6e-05, "loss": 0.51701}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._total_steps: float | None = None  # the announced run length, for the progress records

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "Train Epoch: " in text:
            return self._progress(text, out)
        m = _TOTAL_STEPS.match(text)
        if m:
            self._total_steps = float(int(m.group("n")))
            return True
        return False

    def _progress(self, text: str, out: Emitter) -> bool:
        head = _HEADER.search(text)
        if not head:
            return False
        metrics: dict[str, float] = {
            "epoch": float(int(head.group("epoch"))),
            "num_samples": float(int(head.group("done"))),
            "samples_per_epoch": float(int(head.group("total"))),
        }
        values: dict[str, float] = {}
        for pair in _PAIR.finditer(text, head.end()):
            value = parse_number(pair.group("value"))
            if value is None:
                continue  # not a number: say nothing rather than something wrong
            values.setdefault(_label_name(pair.group("label")), value)
            for rate in _RATE.finditer(pair.group("rates")):
                per_s = parse_number(rate.group("value"))
                if per_s is not None:
                    values.setdefault("samples_per_s_per_gpu" if rate.group("gpu") else "samples_per_s", per_s)
        if not values:
            return False
        metrics.update(values)
        if self._total_steps is not None:
            metrics.setdefault("total_steps", self._total_steps)
        step = head.group("step")
        out.step(int(step) if step is not None else None, metrics)
        return True
