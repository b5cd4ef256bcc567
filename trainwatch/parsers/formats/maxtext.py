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
from trainwatch.parsers.base import Emitter, Parser, Sample

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
    samples = (
        Sample(  # AI-Hypercomputer/maxtext PR #4847 (Gemma, absl prefix, lm_loss and perplexity)
            "I0811 21:54:55.531340 138304841739136 metric_logger.py:226] completed step: 1, seconds: 0.631, "
            "TFLOP/s/device: 5688.282, Tokens/s/device: 311629.521, total_weights: 1572864, loss: 12.979, lm_loss: "
            "12.979, perplexity: 433358.281\n"
            "I0811 21:55:06.119312 138304841739136 metric_logger.py:226] completed step: 2, seconds: 10.228, "
            "TFLOP/s/device: 350.869, Tokens/s/device: 19222.175, total_weights: 1572864, loss: 12.980, lm_loss: "
            "12.980, perplexity: 433463.719\n",
            steps=(
                (1, {"step_time_s": 0.631, "tflops": 5688.282, "tokens_per_s_per_gpu": 311629.521, "loss": 12.979}),
                (
                    2,
                    {
                        "step_time_s": 10.228,
                        "tflops": 350.869,
                        "tokens_per_s_per_gpu": 19222.175,
                        "total_weights": 1572864,
                        "loss": 12.980,
                        "lm_loss": 12.980,
                        "perplexity": 433463.719,
                    },
                ),
            ),
        ),
        Sample(  # AI-Hypercomputer/maxtext PR #761 (the line that added Tokens/s/device)
            "completed step: 9, seconds: 1.341, TFLOP/s/device: 257.929, Tokens/s/device: 36653.244, loss: 0.000\n",
            steps=((9, {"step_time_s": 1.341, "tflops": 257.929, "tokens_per_s_per_gpu": 36653.244, "loss": 0.0}),),
        ),
    )

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
