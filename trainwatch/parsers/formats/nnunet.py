"""nnU-Net (v1 and v2), which logs each epoch as a block of lines, one figure per line:

    2024-04-26 09:39:10.910043: Epoch 0                              (v2)
    2024-04-26 09:39:10.914042: Current learning rate: 0.01
    2024-04-26 09:41:39.493872: train_loss 0.7088
    2024-04-26 09:41:39.498914: val_loss 0.4628
    2024-04-26 09:41:39.501914: Pseudo dice [0.0, 0.8125, 0.7704]
    2024-04-26 09:41:39.505914: Epoch time: 148.59 s
    2024-04-26 09:41:39.507914: Yayy! New best EMA pseudo Dice: 0.0

    epoch:  6                                                        (v1)
    2022-02-11 09:34:49.625515: train loss : -0.6584
    2022-02-11 09:34:59.688008: validation loss: -0.7226
    2022-02-11 09:34:59.688808: Average global foreground Dice: [0.8837]
    2022-02-11 09:35:00.857095: lr: 0.009937
    2022-02-11 09:35:01.343246: This epoch took 137.136132 s

The epoch is the step (nnU-Net trains a fixed number of epochs of 250 iterations). Its losses are
Dice + cross-entropy, so they are negative as training goes well. The Dice lists are kept as their
mean (`pseudo_dice`, `foreground_dice`), the epoch's duration as `epoch_time_s`. A block is a step
at its duration line (or when the next epoch begins, or at the end of input).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_NUM = NUMBER
_STAMP = r"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: ?)?"
_EPOCH = re.compile(_STAMP + r"(?:Epoch (?P<v2>\d{1,9})|epoch:\s+(?P<v1>\d{1,9}))\s*$")
_FIGURES = (
    (re.compile(_STAMP + rf"(?:Current learning rate|lr): (?P<v>{_NUM})\s*$"), "lr"),
    (re.compile(_STAMP + rf"(?:train_loss|train loss :) (?P<v>{_NUM})\s*$"), "loss"),
    (re.compile(_STAMP + rf"(?:val_loss|validation loss:) (?P<v>{_NUM})\s*$"), "eval_loss"),
    (re.compile(_STAMP + rf"Yayy! New best EMA pseudo Dice: (?P<v>{_NUM})\s*$"), "ema_pseudo_dice"),
)
_DICE = re.compile(_STAMP + r"(?P<name>Pseudo dice|Average global foreground Dice:) \[(?P<list>[^\]]*)\]\s*$")
_TOOK = re.compile(_STAMP + rf"(?:Epoch time:|This epoch took) (?P<v>{_NUM}) s\s*$")


class NnUNetParser(Parser):
    name = "nnunet"
    title = "nnU-Net (v1, v2)"
    triggers = (
        "Epoch ",
        "epoch:",
        "learning rate",
        "train_loss ",
        "val_loss ",
        "loss :",
        "loss:",
        "ice",
        "lr: ",
        "epoch took",
    )
    example = "2024-04-26 09:41:39.493872: train_loss 0.7088"
    priority = 100
    samples = (
        Sample(  # MIC-DKFZ/nnUNet issue #2140 (v2)
            "2024-04-26 09:39:10.910043: Epoch 0\n"
            "2024-04-26 09:39:10.914042: Current learning rate: 0.01\n"
            "using pin_memory on device 0\n"
            "2024-04-26 09:41:39.493872: train_loss 0.7088\n"
            "2024-04-26 09:41:39.498914: val_loss 0.4628\n"
            "2024-04-26 09:41:39.501914: Pseudo dice [0.0, 0.8, 0.6]\n"
            "2024-04-26 09:41:39.505914: Epoch time: 148.59 s\n"
            "2024-04-26 09:41:39.507914: Yayy! New best EMA pseudo Dice: 0.0\n"
            "2024-04-26 09:41:40.307418: Epoch 1\n"
            "2024-04-26 09:41:40.311464: Current learning rate: 0.00999\n"
            "2024-04-26 09:43:54.932336: train_loss 0.4043\n",
            steps=(
                (0, {"epoch": 0, "lr": 0.01, "loss": 0.7088, "eval_loss": 0.4628, "epoch_time_s": 148.59}),
                (1, {"epoch": 1, "lr": 0.00999, "loss": 0.4043}),
            ),
        ),
        Sample(  # MIC-DKFZ/nnUNet issue #938 (v1: negative Dice + CE losses)
            "epoch:  6\n"
            "2022-02-11 09:34:49.625515: train loss : -0.6584\n"
            "2022-02-11 09:34:59.688008: validation loss: -0.7226\n"
            "2022-02-11 09:34:59.688808: Average global foreground Dice: [0.8837]\n"
            "2022-02-11 09:35:00.857095: lr: 0.009937\n"
            "2022-02-11 09:35:01.343246: This epoch took 137.136132 s\n",
            steps=((6, {"loss": -0.6584, "eval_loss": -0.7226, "foreground_dice": 0.8837, "lr": 0.009937}),),
        ),
    )

    def __init__(self) -> None:
        self._epoch: int | None = None
        self._metrics: dict[str, float] = {}
        self._line = 0
        self._time: str | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _EPOCH.match(text)
        if m is not None:
            self._release(out)
            self._epoch = int(m.group("v2") or m.group("v1"))
            self._metrics = {"epoch": float(self._epoch)}
            self._line, self._time = line.no, line_time(text)
            return True
        if self._epoch is None:
            return False
        for pattern, name in _FIGURES:
            got = pattern.match(text)
            value = parse_number(got.group("v")) if got is not None else None
            if value is not None:
                if name == "ema_pseudo_dice" and not self._metrics:
                    out.step(self._epoch, {name: value})  # printed after the epoch's duration line
                else:
                    self._metrics[name] = value
                return True
        dice = _DICE.match(text)
        if dice is not None:
            values = [v for v in (parse_number(p) for p in dice.group("list").split(",")) if v is not None]
            if values:
                name = "pseudo_dice" if dice.group("name") == "Pseudo dice" else "foreground_dice"
                self._metrics[name] = sum(values) / len(values)
            return True
        took = _TOOK.match(text)
        if took is not None:
            value = parse_number(took.group("v"))
            if value is not None:
                self._metrics["epoch_time_s"] = value
            self._release(out)
            return True
        return False

    def finish(self, out: Emitter) -> None:
        self._release(out)

    def _release(self, out: Emitter) -> None:
        if self._epoch is not None and len(self._metrics) > 1:
            out.step(self._epoch, self._metrics, time=self._time, line=self._line)
        self._metrics = {}
