"""timm's `train.py` (and its forks): one line per logged batch, `Test:` lines for validation.

    Train: 1 [ 350/5004 (  7%)]  Loss:  6.732388 (6.8414)  Time: 1.271s,  201.43/s  (0.608s,  420.96/s)
        LR: 2.133e-02  Data: 1.056 (0.403)
    Test: [  30/30]  Time: 3.856 (0.732)  Loss:   6.615 ( 6.691)  Acc@1:   0.000 (  0.076)

`Train: e` is the epoch; the batch counter restarts each epoch, so the step is counted on across
epochs (`(epoch - first epoch) x batches + batch`). Each meter prints its latest value and then, in
parentheses, its average: the latest is the metric. `Time` is the batch time and `N/s` the samples
per second (all processes). `Test:` figures are `eval_*` at the last training step.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_group

_TRAIN = re.compile(
    r"\bTrain: (?P<epoch>\d{1,9}) \[\s*(?P<n>\d{1,12})/(?P<m>\d{1,12}) \(\s*[\d.]+%\)\]\s+(?P<rest>.*)$"
)
_TEST = re.compile(r"\bTest: \[\s*(?P<n>\d{1,12})/(?P<m>\d{1,12})\]\s+(?P<rest>.*)$")


class TimmParser(Parser):
    name = "timm"
    title = "timm train.py"
    triggers = ("Train: ", "Test: [")
    example = "Train: 1 [ 350/5004 (  7%)]  Loss:  6.732388 (6.8414)  Time: 1.271s,  201.43/s  LR: 2.133e-02"
    priority = 100
    samples = (
        Sample(  # optimum-habana's timm example (two epochs), huggingface/pytorch-image-models issue #814
            "Train: 0 [   0/73 (  1%)]  Loss: 6.86 (6.86)  Time: 9.575s,   13.37/s  (9.575s,   13.37/s)  "
            "LR: 1.000e-05  Data: 0.844 (0.844)\n"
            "Test: [  30/30]  Time: 3.856 (0.732)  Loss:   6.615 ( 6.691)  Acc@1:   0.000 (  0.076)  "
            "Acc@5:   1.176 (  3.287)\n"
            "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  863.22/s)  "
            "LR: 1.001e-02  Data: 0.053 (0.051)\n",
            steps=(
                (0, {"loss": 6.86, "step_time_s": 9.575, "samples_per_s": 13.37, "lr": 1e-05, "data_time_s": 0.844}),
                (0, {"eval_loss": 6.615}),
                (123, {"epoch": 1, "loss": 3.23, "samples_per_s": 798.85}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._first_epoch: int | None = None
        self._last_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _TRAIN.search(text)
        if m is not None:
            reading = read_group(m)
            if reading is None:
                return False
            epoch, n, total = int(m.group("epoch")), int(m.group("n")), int(m.group("m"))
            if self._first_epoch is None:
                self._first_epoch = epoch
            step = max(0, epoch - self._first_epoch) * total + n
            self._last_step = step
            out.step(step, {**reading.metrics, "epoch": float(epoch)})
            return True
        reading = read_group(_TEST.search(text))
        if reading is None:
            return False
        out.step(self._last_step, {("eval_" + k): v for k, v in reading.metrics.items()})
        return True
