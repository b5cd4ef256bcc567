"""Catalyst's epoch summaries (catalyst-team/catalyst), one line per loader and epoch:

    2/100 * Epoch 2 (train): _base/lr=0.0063 | _base/momentum=0.9000 | _timers/batch_time=0.0113 | loss=0.1265
    2/100 * Epoch 2 (valid): _base/lr=0.0088 | _timers/batch_time=0.0113 | loss=0.1091
    train (1/3) accuracy01: 0.9263 | loss: 0.2497 | lr: 0.02 | momentum: 0.9                   (20.x)

The epoch is the step (`total_steps` the epochs of the run). The training loader's figures are the
step's; another loader's (`valid`, `infer`, `test`) are evaluation figures, `eval_*`, and its
optimizer state (`lr`, `momentum`) is not repeated. The namespaces `_base/`, `_timers/` only group
names (`names.field_name`): `_timers/batch_time` is the step time, `_timers/_fps` the samples per second.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_OLD = re.compile(
    r"^\s*(?P<epoch>\d{1,9})/(?P<epochs>\d{1,9}) \* Epoch (?P<same>\d{1,9}) \((?P<loader>[\w-]{1,40})\): (?P<rest>.+)$"
)
# (20.x: only its loaders' names; `Epoch (1/10) loss: 0.5` is any loop's line, not Catalyst's)
_NEW = re.compile(
    r"^\s*(?P<loader>train|training|valid|validation|val|infer|test|eval) \((?P<epoch>\d{1,9})/(?P<epochs>\d{1,9})\) "
    r"(?P<rest>\S+: .+)$"
)
_TRAIN = frozenset(("train", "training", "train_loader"))
_OPTIMIZER = frozenset(("lr", "momentum", "base_momentum"))


class CatalystParser(Parser):
    name = "catalyst"
    title = "Catalyst"
    triggers = (" * Epoch ", ") ")
    example = "2/100 * Epoch 2 (train): _base/lr=0.0063 | _timers/batch_time=0.0113 | loss=0.1265"
    priority = 400  # (`) ` is a common text: after the frameworks whose hot lines are tested first)
    samples = (
        Sample(  # catalyst-team/catalyst issue #290
            "2/100 * Epoch 2 (train): _base/lr=0.0063 | _base/momentum=0.9000 | _timers/_fps=5849.0785 | "
            "_timers/batch_time=0.0113 | _timers/data_time=0.0107 | _timers/model_time=0.0006 | loss=0.1265\n"
            "2/100 * Epoch 2 (valid): _base/lr=0.0088 | _base/momentum=0.9000 | _timers/_fps=5848.7103 | "
            "_timers/batch_time=0.0113 | _timers/data_time=0.0107 | _timers/model_time=0.0005 | loss=0.1091\n",
            steps=(
                (
                    2,
                    {
                        "epoch": 2,
                        "lr": 0.0063,
                        "step_time_s": 0.0113,
                        "data_time_s": 0.0107,
                        "samples_per_s": 5849.0785,
                        "loss": 0.1265,
                    },
                ),
                (2, {"eval_loss": 0.1091}),
            ),
        ),
        Sample(  # catalyst 20.x's loader summary (catalyst-team/catalyst README)
            "train (1/3) accuracy01: 0.9263 | loss: 0.2497 | lr: 0.02 | momentum: 0.9\n"
            "valid (1/3) accuracy01: 0.9612 | loss: 0.1276 | lr: 0.02 | momentum: 0.9\n",
            steps=(
                (1, {"epoch": 1, "loss": 0.2497, "lr": 0.02}),
                (1, {"eval_loss": 0.1276, "eval_accuracy01": 0.9612}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _OLD.match(text)
        if m is None or m.group("epoch") != m.group("same"):
            m = _NEW.match(text)
            if m is None:
                return False
        reading = read_fields(m.group("rest").replace(" | ", ", "))
        if reading is None or not reading.metrics:
            return False
        epoch, epochs = int(m.group("epoch")), int(m.group("epochs"))
        if epoch > epochs:
            return False
        loader = m.group("loader").lower()
        found = dict(reading.metrics)
        if "timers_fps" in found:  # `_timers/_fps`: the batch size over the batch time, samples per second
            found.setdefault("samples_per_s", found.pop("timers_fps"))
        if loader in _TRAIN:
            metrics = found
            metrics["epoch"] = float(epoch)
            metrics["total_steps"] = float(epochs)
        else:
            metrics = {
                name if name.startswith("eval_") else f"eval_{name}": value
                for name, value in found.items()
                if name not in _OPTIMIZER
            }
            if not metrics:
                return False
        out.step(epoch, metrics)
        return True
