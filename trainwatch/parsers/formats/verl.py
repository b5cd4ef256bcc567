"""verl (Volcano Engine RL): the console logger's one line per step, `key:value` joined by ` - `.

    (TaskRunner pid=4035927) step:0 - timing/gen:21.470 - critic/vf_loss:14.947 - critic/grad_norm:1023.278
        - critic/lr(1e-4):0.100 - actor/entropy_loss:0.433 - actor/pg_loss:-0.005 - actor/grad_norm:1.992
        - actor/lr(1e-4):0.010 - critic/score/mean:0.004 - ... - timing_s/step:48.2 - perf/throughput:1210.3
    step:2 - train/loss:1.437 - train/lr(1e-3):0.002 - train/time(s):2.105      (SFT trainer)

A number in parentheses after a label is the scale the value is printed in: `lr(1e-4):0.010` is
1e-06. For PPO/GRPO the policy's figures are the run's: `actor/pg_loss` is the loss, `actor/grad_norm`
and `actor/lr` the gradient norm and learning rate (the critic's keep their `critic_` names).
`timing_s/step` (or SFT's `train/time(s)`) is the step time; `perf/throughput` is tokens/s per GPU;
`val/...` and `val-core/...` figures are evaluation ones. Every other field keeps its name.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_LINE = re.compile(r"(?:^|[\s)])step:(?P<step>\d{1,12}) - (?P<rest>.*\S)\s*$")
_SCALED = re.compile(r"^(?P<key>.*?)\((?P<scale>[\d.]+e[-+]?\d+)\)$")
_UNIT = re.compile(r"^(?P<key>.*?)\((?P<unit>s|ms)\)$")
# The first of these labels present gives the contract metric.
_PICK = {
    "loss": ("train/loss", "actor/loss", "actor/pg_loss"),
    "grad_norm": ("train/grad_norm", "actor/grad_norm"),
    "lr": ("train/lr", "actor/lr"),
    "step_time_s": ("timing_s/step", "timing/step", "train/time"),
    "tokens_per_s_per_gpu": ("perf/throughput",),
    "max_mem_gib": ("perf/max_memory_allocated_gb",),
    "epoch": ("training/epoch", "train/epoch"),
}


def _pairs(rest: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for part in rest.split(" - "):
        label, sep, raw = part.rpartition(":")
        number = parse_number(raw.strip()) if sep else None
        if number is None or not label:
            continue
        label = label.strip()
        m = _SCALED.match(label)
        if m is not None:
            label, number = m.group("key"), number * float(m.group("scale"))
        m = _UNIT.match(label)
        if m is not None:
            label = m.group("key")
            number = number / 1000.0 if m.group("unit") == "ms" else number
        values.setdefault(label, number)
    return values


class VerlParser(Parser):
    name = "verl"
    title = "verl (RL post-training, SFT)"
    triggers = ("step:",)
    example = "step:0 - timing/gen:21.470 - actor/pg_loss:-0.005 - actor/grad_norm:1.992 - actor/lr(1e-4):0.010"
    priority = 100
    samples = (
        Sample(  # verl docs, PPO quickstart on GSM8K (lines shortened)
            "(TaskRunner pid=2812) step:0 - timing/gen:21.470 - timing/ref:4.360 - critic/vf_loss:14.947 - "
            "critic/grad_norm:1023.278 - critic/lr(1e-4):0.100 - actor/entropy_loss:0.433 - actor/pg_loss:-0.005 - "
            "actor/grad_norm:1.992 - actor/lr(1e-4):0.010 - critic/score/mean:0.004 - response_length/mean:239.133\n"
            "(TaskRunner pid=2812) step:1 - timing/gen:23.020 - critic/vf_loss:18.472 - critic/grad_norm:942.924 - "
            "critic/lr(1e-4):0.100 - actor/pg_loss:0.000 - actor/grad_norm:2.060 - actor/lr(1e-4):0.010\n",
            steps=(
                (
                    0,
                    {"loss": -0.005, "grad_norm": 1.992, "lr": 1e-06, "critic_grad_norm": 1023.278, "critic_lr": 1e-05},
                ),
                (1, {"loss": 0.0, "grad_norm": 2.06}),
            ),
        ),
        Sample(  # verl SFT trainer console output
            "step:2 - train/loss:1.437 - train/lr(1e-3):0.002 - train/time(s):2.105\n"
            "step:4 - train/loss:nan - train/lr(1e-3):0.006 - train/time(s):2.094\n",
            steps=((2, {"loss": 1.437, "lr": 2e-06, "step_time_s": 2.105}), (4, {"loss": float("nan")})),
            events=("nan",),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.search(text)
        if m is None or " - " not in m.group("rest"):
            return False
        values = _pairs(m.group("rest"))
        if not values:
            return False
        metrics: dict[str, float] = {}
        picked: set[str] = set()
        for name, labels in _PICK.items():
            label = next((label for label in labels if label in values), None)
            if label is not None:
                metrics[name] = values[label]
                picked.add(label)
        for label, value in values.items():
            if label in picked:
                continue
            if label.startswith(("val/", "val-core/", "val-aux/")):
                name = "eval_" + snake(label.split("/", 1)[1])
            else:
                name = snake(label)
            metrics.setdefault(name, value)
        out.step(int(m.group("step")), metrics)
        return True
