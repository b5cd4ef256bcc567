"""VAR (FoundationVision's visual autoregressive models) and the repos built on it (VAR-CLIP,
Infinity-style forks): its MetricLogger line, after the `(file, line N)=>` logger prefix:

    [05-10 20:46:09] (github/VAR/utils/misc.py, line 314)=> [Ep]: [   0/200]  [ 417/1669]  eta: 0:28:12  tlr: 2e-05  tnm: 0.16  Lm: 8.184 (8.184)  Lt: 8.153 (8.153)  Accm: 0.09 (0.09)  Acct: 0.07 (0.07)  time: 1.3325  data: 0.4040

`[Ep]: [e/E]  [i/I]` is the epoch of its total and the iteration within it (restarting each epoch),
so the step is `e x I + i` (epochs count from 0). VAR's trainer names its meters: `tlr` the
(maximum) learning rate, `tnm` the gradient norm, `Lm` the mean cross-entropy over all scales (the
loss it optimizes; the window's value, then its global average in parentheses), `Lt` the loss on the
last scale's tokens (`loss_tail`), `Accm`/`Acct` the token accuracies (%) over all and over the last
scale. `time` and `data` are the iteration's and the data loading's seconds. The epoch's summary
(`[ep2]  (training )  Lm: 7.347 ...`) and `Total time` lines repeat these: they are not read.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_LINE = re.compile(
    r"\[Ep\]: \[\s*(?P<e>\d{1,9})/(?P<et>\d{1,9})\]\s+\[\s*(?P<i>\d{1,12})/(?P<it>\d{1,12})\]\s+(?P<rest>.*)$"
)
_METER = re.compile(rf"(?P<name>[A-Za-z]\w{{0,20}}): (?P<v>{NUMBER})(?: \((?P<avg>{NUMBER})\))?")
_NAMES = {
    "tlr": "lr",
    "tnm": "grad_norm",
    "Lm": "loss",
    "Lt": "loss_tail",
    "Accm": "acc_pct",
    "Acct": "acc_tail_pct",
    "time": "step_time_s",
    "data": "data_time_s",
}


class VarParser(Parser):
    name = "var"
    title = "VAR trainer (FoundationVision visual autoregressive models)"
    triggers = ("[Ep]: [",)
    example = "[Ep]: [   0/200]  [ 417/1669]  eta: 0:28:12  tlr: 2e-05  tnm: 0.16  Lm: 8.184 (8.184)  time: 1.3325"
    priority = 100
    samples = (
        Sample(  # daixiangzi/VAR-CLIP logs/class_conditional_imagenet.log (the VAR codebase): epochs 0 and 1
            "[05-10 20:46:09] (github/VAR/utils/misc.py, line 314)=> [Ep]: [   0/200]  [ 417/1669]  eta: 0:28:12  "
            "tlr: 2e-05  tnm: 0.16  Lm: 8.184 (8.184)  Lt: 8.153 (8.153)  Accm: 0.09 (0.09)  Acct: 0.07 (0.07)  "
            "time: 1.3325  data: 0.4040\n"
            "[05-10 21:13:37] (github/VAR/utils/misc.py, line 336)=> [Ep]: [   0/200]   Total time:      0:36:53   "
            "(1.326 s / it)\n"
            "[05-10 21:13:37] (idai/github/VAR/train.py, line 234)=>      [ep0]  (training )  Lm: 8.031 (8.031), "
            "Lt: 8.020 (8.020),  Acc m&t: 0.24 0.12,  Remain: 5 days, 3:44:31,  Finish: 2024-05-16 00:58\n"
            "[05-10 21:41:50] (github/VAR/utils/misc.py, line 314)=> [Ep]: [   1/200]  [ 834/1669]  eta: 0:28:13  "
            "tlr: 0.00011  tnm: 0.53  Lm: 7.771 (7.754)  Lt: 7.826 (7.764)  Accm: 0.58 (0.72)  Acct: 0.24 (0.46)  "
            "time: 3.1688  data: 0.3747\n",
            steps=(
                (
                    417,
                    {
                        "lr": 2e-05,
                        "grad_norm": 0.16,
                        "loss": 8.184,
                        "loss_tail": 8.153,
                        "acc_pct": 0.09,
                        "acc_tail_pct": 0.07,
                        "step_time_s": 1.3325,
                        "data_time_s": 0.404,
                        "epoch": 0.0,
                        "total_steps": 333800.0,
                    },
                ),
                (2503, {"loss": 7.771, "lr": 0.00011, "grad_norm": 0.53, "step_time_s": 3.1688, "epoch": 1.0}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        if m is None:
            return False
        epoch, epochs = int(m.group("e")), int(m.group("et"))
        i, per_epoch = int(m.group("i")), int(m.group("it"))
        if per_epoch <= 0 or i > per_epoch:
            return False
        metrics: dict[str, float] = {}
        for meter in _METER.finditer(m.group("rest")):
            name = _NAMES.get(meter.group("name"))
            value = parse_number(meter.group("v"))
            if name is not None and value is not None:
                metrics.setdefault(name, value)
        metrics["epoch"] = float(epoch)
        metrics["total_steps"] = float(epochs * per_epoch)
        out.step(epoch * per_epoch + i, metrics)
        return True
