"""MaxText (and MaxDiffusion) `metric_logger`:

    completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, total_weights: 196608, loss: 10.374
    completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191          (older: TFLOP/s is per device too)

`/device` figures are per accelerator: `Tokens/s/device` -> `tokens_per_s_per_gpu`.
`lm_loss` keeps its name: `loss` (which may include auxiliary losses) is the primary loss.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser

_LINE = re.compile(r"\bcompleted step: (?P<step>\d{1,18}(?!\d)), (?P<rest>.*)$")

_NAMES = {
    "seconds": "step_time_s",
    "TFLOP/s/device": "tflops",
    "TFLOP/s": "tflops",
    "Tokens/s/device": "tokens_per_s_per_gpu",
    "Samples/s/device": "samples_per_s_per_gpu",
    "loss": "loss",
    "lm_loss": "lm_loss",
}


class MaxTextParser(Parser):
    name = "maxtext"
    title = "MaxText"
    triggers = ("completed step: ",)
    example = "completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, total_weights: 196608, loss: 10.374"
    priority = 100

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        if not m:
            return False
        metrics: dict[str, float] = {}
        for field in m.group("rest").split(", "):
            label, sep, raw = field.partition(": ")
            if not sep:
                continue
            value = parse_number(raw)
            if value is not None:
                metrics[_NAMES.get(label) or snake(label)] = value
        if not metrics:
            return False
        out.step(int(m.group("step")), metrics)
        return True
