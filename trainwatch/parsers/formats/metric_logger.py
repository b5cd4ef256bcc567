"""torchvision references' `MetricLogger.log_every` and the scripts that copied it (DETR, DeiT, MAE,
LLaMA-Accessory, detection/classification references): one line per logged batch.

    Epoch: [0]  [   10/40037]  eta: 6:56:59  lr: 0.1  img/s: 120.38  loss: 22.6492 (28.1895)  acc1: 0.0 (0.0)
        time: 0.6251  data: 0.1307  max mem: 7117
    [01:33:27.164930] Epoch: [0]  [0/1504]  lr: 0.000000  closs: 1.5440 (1.5440)  time: 9.7016  data: 1.4028  max mem: 26869
    Test:  [ 0/50]  eta: 0:00:59  loss: 1.2 (1.2)  acc1: 71.8 (71.8)  time: 1.1  data: 0.9  max mem: 7117

Each meter prints its latest value and, in parentheses, its window average: the latest is the
metric. `time` is the batch time and `data` the data-loading time, in seconds; `max mem` is MiB
(`torch.cuda.max_memory_allocated() / MB`). The batch counter restarts every epoch, so the step is
counted on across epochs: `(epoch - first epoch) x batches + batch`. `Test:` lines are evaluation
batches: their figures are `eval_*` at the last training step.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_group

_LINE = re.compile(
    r"(?P<head>Epoch: \[(?P<epoch>\d{1,9})\]|Test:|Train:|Eval:|Val:)\s+\[\s*(?P<n>\d{1,12})\s*/\s*(?P<m>\d{1,12})\]"
    r"\s+(?:eta: (?:\d+ days?, )?[\d:]+\s+)?(?P<rest>.*\btime: .*)$"
)
_MIB = 1024.0


class MetricLoggerParser(Parser):
    name = "metric_logger"
    title = "torchvision MetricLogger (references, DETR, DeiT, MAE)"
    triggers = ("time: ",)
    example = "Epoch: [0]  [  10/5005]  eta: 2:21:13  lr: 0.1  loss: 6.9 (6.9)  time: 1.7  data: 0.4  max mem: 5038"
    priority = 100
    samples = (
        Sample(  # pytorch/vision issue #4086: the first line's eta has days, the rest do not
            "Epoch: [0]  [    0/40037]  eta: 1 day, 22:47:18  lr: 0.1  img/s: 11.54904442989675  loss: 7.2017 (7.2017)  "
            "acc1: 0.0000 (0.0000)  acc5: 0.0000 (0.0000)  time: 4.2071  data: 1.4362  max mem: 7117\n"
            "Epoch: [0]  [   10/40037]  eta: 6:56:59  lr: 0.1  img/s: 120.38295738808868  loss: 22.6492 (28.1895)  "
            "acc1: 0.0000 (0.0000)  acc5: 0.0000 (0.5682)  time: 0.6251  data: 0.1307  max mem: 7117\n"
            "Epoch: [1]  [    0/40037]  eta: 6:56:59  lr: 0.1  img/s: 120.0  loss: 5.1 (5.2)  "
            "time: 0.6251  data: 0.1307  max mem: 7117\n"
            "Test:  [ 0/50]  eta: 0:00:59  loss: 1.2 (1.2)  acc1: 71.8 (71.8)  time: 1.1  data: 0.9  max mem: 7117\n",
            steps=(
                (0, {"loss": 7.2017, "lr": 0.1, "samples_per_s": 11.54904442989675, "step_time_s": 4.2071}),
                (0, {"data_time_s": 1.4362, "max_mem_gib": 7117 / 1024, "epoch": 0}),
                (10, {"loss": 22.6492, "acc5": 0.0}),
                (40037, {"loss": 5.1, "epoch": 1}),
                (40037, {"eval_loss": 1.2, "eval_acc1": 71.8}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._first_epoch: int | None = None
        self._last_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        reading = read_group(m)
        if m is None or reading is None:
            return False
        metrics = dict(reading.metrics)
        mem = metrics.pop("max_mem", None)
        if mem is not None:
            metrics["max_mem_gib"] = mem / _MIB
        n, total = int(m.group("n")), int(m.group("m"))
        if m.group("epoch") is None:
            if not m.group("head").startswith("Train"):
                evaluation = {("eval_" + k if not k.startswith("eval_") else k): v for k, v in metrics.items()}
                out.step(self._last_step, evaluation)
                return True
            step = n
        else:
            epoch = int(m.group("epoch"))
            if self._first_epoch is None:
                self._first_epoch = epoch
            step = max(0, epoch - self._first_epoch) * total + n
            metrics["epoch"] = float(epoch)
        self._last_step = step
        out.step(step, metrics)
        return True
