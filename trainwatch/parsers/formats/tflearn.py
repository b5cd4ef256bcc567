"""TFLearn's TermLogger, two lines a step:

    Training Step: 10  | total loss: 1.87821 | time: 8.900s
    | Adam | epoch: 001 | loss: 1.87821 - acc: 0.3264 | val_loss: 1.42485 - val_acc: 0.5097 -- iter: 00640/55000

The first names the step, its loss and time; the second the optimizer's epoch and figures, an
evaluation's when it ran, and `iter` — the samples seen in the epoch, not a step. The second line
belongs to the step above it. With several optimizers (a GAN) each prints its own second line.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = NUMBER
_STEP = re.compile(
    rf"^\s*Training Step: (?P<step>\d{{1,12}})\s+\| total loss: (?P<loss>{_NUM})(?: \| time: (?P<time>{_NUM})s)?\s*$"
)
_OPTIMIZER = re.compile(r"^\s*\| (?P<opt>[\w.-]{1,40}) \| epoch: (?P<epoch>\d{1,9}) \| (?P<body>.*)$")
_ITER = re.compile(r" -- iter: \d{1,12}/\d{1,12}$")
_FIGURE = re.compile(rf"(?P<name>[A-Za-z_][\w]*): (?P<value>{_NUM})")
_NAMES = {"loss": "loss", "acc": "accuracy", "val_loss": "eval_loss", "val_acc": "eval_accuracy"}


class TflearnParser(Parser):
    name = "tflearn"
    title = "TFLearn"
    triggers = ("Training Step: ", " | epoch: ")
    example = "Training Step: 10  | total loss: 1.87821 | time: 8.900s"
    priority = 100
    samples = (
        Sample(  # tflearn/tflearn PR #486
            "Training Step: 9  | total loss: 1.94953 | time: 0.186s\n"
            "| Adam | epoch: 001 | loss: 1.94953 - acc: 0.2935 -- iter: 00576/55000\n"
            "Training Step: 10  | total loss: 1.87821 | time: 8.900s\n"
            "| Adam | epoch: 001 | loss: 1.87821 - acc: 0.3264 | val_loss: 1.42485 - val_acc: 0.5097 -- iter: 00640/55000\n",
            steps=(
                (9, {"loss": 1.94953, "step_time_s": 0.186, "epoch": 1, "accuracy": 0.2935}),
                (10, {"loss": 1.87821, "eval_loss": 1.42485, "eval_accuracy": 0.5097}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _STEP.match(text)
        if m is not None:
            loss = parse_number(m.group("loss"))
            if loss is None:
                return False
            metrics = {"loss": loss}
            seconds = parse_number(m.group("time") or "")
            if seconds is not None:
                metrics["step_time_s"] = seconds
            self._step = int(m.group("step"))
            out.step(self._step, metrics)
            return True
        m = _OPTIMIZER.match(text)
        if m is None or self._step is None:
            return False
        metrics = {"epoch": float(int(m.group("epoch")))}
        body = m.group("body").rstrip()
        it = _ITER.search(body)
        for figure in _FIGURE.finditer(body[: it.start()] if it is not None else body):
            value = parse_number(figure.group("value"))
            name = _NAMES.get(figure.group("name"), figure.group("name"))
            if value is not None:
                metrics.setdefault(name, value)
        out.step(self._step, metrics)
        return True
