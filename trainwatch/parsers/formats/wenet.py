"""WeNet (ASR), whose executor logs each report as `Batch {epoch}/{batch index}`:

    2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 loss_ctc 16.671551 lr 0.00032621 rank 0
    2023-01-30 18:49:55,773 DEBUG CV Batch 4/0 loss 28.517015 loss_att 24.142754 loss_ctc 38.723625 history loss 27.957858 rank 2

The first number is the epoch, the second the batch within it (not `n of M`): the batch is the step,
as printed. `rank N` is the rank. A `CV` line is the cross-validation of the epoch: its `history loss`
(the running mean over the validation set so far) is the evaluation loss, at the last training step.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_LINE = re.compile(
    r"\b(?P<kind>TRAIN|CV) Batch (?P<epoch>\d{1,9})/(?P<batch>\d{1,18}) (?P<rest>.*?)(?: rank (?P<rank>\d{1,9}))?\s*$"
)


class WeNetParser(Parser):
    name = "wenet"
    title = "WeNet"
    triggers = (" Batch ",)
    example = "DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 loss_ctc 16.671551 lr 0.00032621 rank 0"
    priority = 100
    samples = (
        Sample(  # wenet-e2e/wenet issue #941
            "2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 loss_ctc 16.671551 "
            "lr 0.00032621 rank 0\n"
            "2023-01-30 18:49:20,438 DEBUG TRAIN Batch 4/203800 loss 25.618004 loss_att 20.509174 loss_ctc 37.538609 "
            "lr 0.00032619 rank 0\n"
            "2023-01-30 18:49:56,046 DEBUG CV Batch 4/0 loss 28.402842 loss_att 24.164579 loss_ctc 38.292122 "
            "history loss 27.845923 rank 0\n",
            steps=(
                (203700, {"epoch": 4, "loss": 12.646465, "loss_ctc": 16.671551, "lr": 0.00032621}),
                (203800, {"loss": 25.618004, "lr": 0.00032619}),
                (203800, {"eval_loss": 27.845923}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._last: dict[int | None, int] = {}  # the last training step per rank

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        if m is None:
            return False
        reading = read_fields(m.group("rest"))
        if reading is None or not reading.metrics:
            return False
        rank = int(m.group("rank")) if m.group("rank") else None
        if m.group("kind") == "TRAIN":
            step = int(m.group("batch"))
            self._last[rank] = step
            out.step(step, {**reading.metrics, "epoch": float(m.group("epoch"))}, rank=rank)
            return True
        last = self._last.get(rank)
        history = _HISTORY.search(m.group("rest"))
        if last is None or history is None:
            return True  # a validation batch before any training step: nothing to place it at
        out.step(last, {"eval_loss": float(history.group(1))}, rank=rank)
        return True


_HISTORY = re.compile(r"\bhistory loss ([-+]?\d+\.?\d*(?:[eE][-+]?\d+)?)")
