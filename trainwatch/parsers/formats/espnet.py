"""ESPnet2's trainer reports (ASR, TTS, LM recipes).

    [host] 2020-11-11 16:58:28,197 (trainer:486) INFO: 17epoch:train:4501-4875batch: iter_time=0.001, forward_time=0.005, loss=1.281, backward_time=0.005, optim_step_time=1.970e-04, lr_0=0.100, train_time=0.014
    [user] 2021-04-23 19:22:52,420 (trainer:581) WARNING: The grad norm is nan. Skipping updating the model.

A report averages the batches of its range within the epoch: the step is the range's last batch as
printed, the epoch a metric. `train_time` is the seconds one iteration takes, `iter_time` the time spent
waiting for the data iterator, `forward_time` / `backward_time` / `optim_step_time` the phases of an
iteration. `optim0_lr0` / `lr_0` is the learning rate of the first optimizer's first group. The trainer's
"grad norm is nan/inf" warning is a `nan` event (the update is skipped; the loss may stay finite).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_HEAD = re.compile(r"(?<!\w)(?P<epoch>\d{1,9})epoch:train:(?P<first>\d{1,12})-(?P<last>\d{1,12})batch:\s*(?P<rest>.*)$")
_NAN = re.compile(r"The grad norm is (?P<what>nan|inf)", re.I)
_RENAME = {"train_time": "step_time_s", "iter_time": "data_time_s", "optim0_lr0": "lr"}
_PHASES = {"forward_time": "forward", "backward_time": "backward", "optim_step_time": "optimizer"}


class ESPnetParser(Parser):
    name = "espnet"
    title = "ESPnet2"
    triggers = ("epoch:train:", "The grad norm is")
    example = (
        "17epoch:train:4501-4875batch: iter_time=0.001, forward_time=0.005, loss=1.281, lr_0=0.100, train_time=0.014"
    )
    priority = 100
    samples = (
        Sample(  # espnet/espnet issue #2674: LM reports of batch ranges, their phases
            "[PC] 2020-11-11 16:58:28,197 (trainer:486) INFO: 17epoch:train:4501-4875batch: iter_time=0.001, "
            "forward_time=0.005, loss=1.281, backward_time=0.005, optim_step_time=1.970e-04, lr_0=0.100, "
            "train_time=0.014\n"
            "[PC] 2020-11-11 16:58:33,417 (trainer:486) INFO: 17epoch:train:4876-5250batch: iter_time=0.001, "
            "forward_time=0.005, loss=1.310, backward_time=0.005, optim_step_time=2.044e-04, lr_0=0.100, "
            "train_time=0.014\n",
            steps=(
                (4875, {"loss": 1.281, "lr": 0.100, "step_time_s": 0.014, "data_time_s": 0.001, "epoch": 17}),
                (5250, {"loss": 1.310}),
            ),
            phases=((4875, {"forward": 0.005, "backward": 0.005, "optimizer": 1.970e-04}),),
        ),
        Sample(  # espnet/espnet issue #3170: the trainer skips updates whose grad norm is nan
            "[user] 2021-04-23 19:22:56,229 (trainer:581) WARNING: The grad norm is nan. Skipping updating the "
            "model.\n"
            "[user] 2021-04-23 19:22:56,245 (trainer:636) INFO: 2epoch:train:12009-12640batch: iter_time=3.163e-04, "
            "forward_time=0.110, loss=65.129, loss_att=124.079, loss_ctc=144.685, acc=0.065, backward_time=0.086, "
            "optim0_lr0=1.485e-05, train_time=0.624\n"
            "[user] 2021-04-23 19:22:56,858 (trainer:581) WARNING: The grad norm is nan. Skipping updating the "
            "model.\n",
            steps=((12640, {"loss": 65.129, "lr": 1.485e-05, "step_time_s": 0.624, "epoch": 2}),),
            events=("nan",),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        nan = _NAN.search(text)
        if nan is not None:
            out.event("nan", "error", text[nan.start() :].strip(), {"metric": "grad_norm"})
            return True
        m = _HEAD.search(text)
        if m is None:
            return False
        # Named by the reader, so a field ESPnet adds tomorrow is a metric too; then ESPnet's own meanings.
        rest = ", ".join(p for p in m.group("rest").split(", ") if not p.startswith(tuple(_RENAME) + tuple(_PHASES)))
        reading = read_fields(rest)
        metrics = dict(reading.metrics) if reading is not None else {}
        phases: dict[str, float] = {}
        for pair in m.group("rest").split(","):
            key, _, raw = pair.strip().partition("=")
            try:
                value = float(raw)
            except ValueError:
                continue
            if key in _RENAME:
                metrics.setdefault(_RENAME[key], value)
            elif key in _PHASES:
                phases[_PHASES[key]] = value
        if not metrics:
            return False
        metrics["epoch"] = float(m.group("epoch"))
        step = int(m.group("last"))
        out.step(step, metrics)
        if phases:
            out.phases(step, phases)
        return True
