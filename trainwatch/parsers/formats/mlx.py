"""MLX-LM / mlx-examples LoRA training (`mlx_lm.lora`, `lora.py`), as its trainer prints:

    Starting training..., iters: 100
    Iter 1: Val loss 2.936, Val took 5.265s
    Iter 10: Train loss 2.662, Learning Rate 1.000e-05, It/sec 0.490, Tokens/sec 161.374, Trained Tokens 3290, Peak mem 9.707 GB

`iters: N` is the length of the run: every later `Iter` line carries it as `total_steps`. The
validation line is a step of its own: its loss is `eval_loss` and `Val took` is the time the
validation pass took (`eval_time_s`), never the step time. Train lines are read by the field reader
(`It/sec` becomes the step time). Other `Iter N:` lines (`Saved adapter weights`) are left to the
event parser.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import read_fields

_NUM = NUMBER
_START = re.compile(r"^Starting training\.*,? iters: (?P<iters>\d{1,18})\s*$")
_VAL = re.compile(rf"^Iter (?P<step>\d{{1,18}}): Val loss (?P<loss>{_NUM}), Val took (?P<took>{_NUM})s\s*$")
_TRAIN = re.compile(r"^Iter (?P<step>\d{1,18}): Train loss ")


class MLXParser(Parser):
    name = "mlx"
    title = "MLX-LM LoRA trainer"
    triggers = ("Iter ", "iters: ")
    example = "Iter 10: Train loss 2.662, Learning Rate 1.000e-05, It/sec 0.490, Tokens/sec 161.374"
    priority = 100
    samples = (
        Sample(  # ml-explore/mlx-lm PR #330
            "Starting training..., iters: 100\n"
            "Iter 1: Val loss 2.936, Val took 5.265s\n"
            "Iter 10: Train loss 2.662, Learning Rate 1.000e-05, It/sec 0.490, Tokens/sec 161.374, "
            "Trained Tokens 3290, Peak mem 9.707 GB\n",
            steps=(
                (1, {"eval_loss": 2.936, "eval_time_s": 5.265, "total_steps": 100}),
                (
                    10,
                    {"loss": 2.662, "lr": 1e-05, "step_time_s": 1 / 0.49, "tokens_per_s": 161.374, "total_steps": 100},
                ),
            ),
        ),
        Sample(  # ml-explore/mlx-examples issue #210: the 2023 lora.py, no learning rate
            "Iter 1: Val loss 2.612, Val took 1822.826s\nIter 10: Train loss 3.608, It/sec 0.015, Tokens/sec 1.425\n",
            steps=((1, {"eval_loss": 2.612}), (10, {"loss": 3.608, "step_time_s": 1 / 0.015, "tokens_per_s": 1.425})),
        ),
    )

    def __init__(self) -> None:
        self._total: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if text.startswith("Starting"):
            start = _START.match(text)
            if start is None:
                return False
            self._total = int(start.group("iters"))
            return True
        if not text.startswith("Iter"):
            return False
        val = _VAL.match(text)
        if val is not None:
            loss, took = parse_number(val.group("loss")), parse_number(val.group("took"))
            if loss is None or took is None:
                return False
            self._emit(out, int(val.group("step")), {"eval_loss": loss, "eval_time_s": took})
            return True
        train = _TRAIN.match(text)
        reading = read_fields(text) if train is not None else None
        if train is None or reading is None or "loss" not in reading.metrics:
            return False
        self._emit(out, int(train.group("step")), dict(reading.metrics))
        return True

    def _emit(self, out: Emitter, step: int, metrics: dict[str, float]) -> None:
        if self._total is not None and step <= self._total:
            metrics["total_steps"] = float(self._total)
        out.step(step, metrics)
