"""tinygrad's training examples (`examples/hlb_cifar10.py`, `examples/mlperf/model_train.py`), which print
each step with the value before its name:

      1 93.44 s run, 11.8750 loss, 0.000000000001 LR, 642.43 GB used,  19644.30 GFLOPS
     42  412.37 ms run,   38.12 ms python,   1.612 loss, 5.31 GB used,  1203.77 GFLOPS

The leading number is the step. `run` is the step's wall time (`ms` or `s`), `python` the part
spent in Python (`python_time_s`), `LR` the learning rate, `GB used` the device memory (decimal
GB, stored in GiB), `GFLOPS` the achieved rate (kept as `gflops`), `tok/s` tokens per second.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = NUMBER
_LINE = re.compile(rf"^\s*(?P<step>\d{{1,12}})\s+(?P<parts>{_NUM}\s+(?:ms|s) run\b.*)$")
_PART = re.compile(rf"^\s*(?P<v>{_NUM})\s+(?P<name>[A-Za-z/%][\w/ %]*?)\s*$")
_SECONDS = {"ms": 1e-3, "s": 1.0}


def _metric(value: float, name: str) -> tuple[str, float] | None:
    unit, _, what = name.partition(" ")
    if unit in _SECONDS and what in ("run", "python"):
        return ("step_time_s" if what == "run" else "python_time_s"), value * _SECONDS[unit]
    if name == "loss":
        return "loss", value
    if name in ("LR", "lr"):
        return "lr", value
    if name == "GB used":
        return "mem_gib", value * 1e9 / 2**30
    if name == "GFLOPS":
        return "gflops", value
    if name in ("tok/s", "tokens/s"):
        return "tokens_per_s", value
    if name.replace(" ", "").isalpha():
        return name.lower().replace(" ", "_"), value
    return None


class TinygradParser(Parser):
    name = "tinygrad"
    title = "tinygrad training examples"
    triggers = (" run, ",)
    example = "    1 93.44 s run, 11.8750 loss, 0.000000000001 LR, 642.43 GB used,  19644.30 GFLOPS"
    priority = 100
    samples = (
        Sample(  # tinygrad/tinygrad PR #13803: the MLPerf Llama 3 8B trainer
            "    1 93.44 s run, 11.8750 loss, 0.000000000001 LR, 642.43 GB used,  19644.30 GFLOPS\n"
            "    5 4.36 s run, 11.9375 loss, 0.000000000003 LR, 1454.57 GB used, 398116.13 GFLOPS\n",
            steps=(
                (1, {"step_time_s": 93.44, "loss": 11.875, "lr": 1e-12, "gflops": 19644.30}),
                (5, {"step_time_s": 4.36, "loss": 11.9375, "lr": 3e-12, "mem_gib": 1454.57e9 / 2**30}),
            ),
        ),
        Sample(  # the hlb_cifar10 print: milliseconds, the Python share, no learning rate
            "   42  412.37 ms run,   38.12 ms python,   1.612 loss, 5.31 GB used,  1203.77 GFLOPS\n",
            steps=((42, {"step_time_s": 0.41237, "python_time_s": 0.03812, "loss": 1.612}),),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if m is None:
            return False
        metrics: dict[str, float] = {}
        for part in m.group("parts").split(","):
            p = _PART.match(part)
            value = parse_number(p.group("v")) if p is not None else None
            got = _metric(value, p.group("name")) if p is not None and value is not None else None
            if got is not None:
                metrics.setdefault(got[0], got[1])
        if "step_time_s" not in metrics:
            return False
        out.step(int(m.group("step")), metrics)
        return True
