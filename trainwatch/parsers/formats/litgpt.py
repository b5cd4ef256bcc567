"""LitGPT finetune/pretrain progress lines:

    Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)
    Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20 ms (step) remaining time: 0:01:54

`step` is the optimizer step; with gradient accumulation several `iter` lines share one step and
only the one marked `(step)` closes it. Unmarked lines (older LitGPT prints no marker) are held and
the last one of each step is emitted when the step changes. `iter time` is per micro-iteration: it is
`step_time_s` only when iter and step advance together, else `iter_time_s`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_eta_s, parse_number
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.timestamps import line_time

_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_LINE = re.compile(
    rf"^Epoch (?P<epoch>\d{{1,18}}(?!\d)) \| iter (?P<iter>\d{{1,18}}(?!\d)) step (?P<step>\d{{1,18}}(?!\d)) \| loss train: (?P<loss>{_NUM}), "
    rf"val: (?P<val>{_NUM}|n/a) \| iter time: (?P<ms>{_NUM}) ms(?P<marker> \(step\))?"
    rf"(?: remaining time: (?P<eta>[\d:]+(?:\.\d+)?))?\s*$"
)


class LitGPTParser(Parser):
    name = "litgpt"
    title = "LitGPT"
    triggers = ("| loss train:",)
    example = "Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)"
    priority = 100

    def __init__(self) -> None:
        self._held: tuple[int, dict[str, float], int, str | None] | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if not m:
            return False
        loss = parse_number(m.group("loss"))
        ms = parse_number(m.group("ms"))
        if loss is None or ms is None:
            return False
        step, it = int(m.group("step")), int(m.group("iter"))
        metrics: dict[str, float] = {"loss": loss, "epoch": float(int(m.group("epoch")))}
        metrics["step_time_s" if it == step else "iter_time_s"] = ms / 1000
        if m.group("val") != "n/a":
            val = parse_number(m.group("val"))
            if val is not None:
                metrics["eval_loss"] = val
        if m.group("eta"):
            eta = parse_eta_s(m.group("eta"))
            if eta is not None:
                metrics["eta_s"] = eta
        if self._held is not None and self._held[0] != step:
            self._release(out)
        if m.group("marker"):
            self._held = None
            out.step(step, metrics)
        else:
            self._held = (step, metrics, line.no, line_time(text))
        return True

    def finish(self, out: Emitter) -> None:
        self._release(out)

    def _release(self, out: Emitter) -> None:
        held, self._held = self._held, None
        if held is not None:
            step, metrics, line_no, time = held
            out.step(step, metrics, time=time, line=line_no)
