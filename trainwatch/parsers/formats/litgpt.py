"""LitGPT finetune/pretrain progress lines:

    Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)
    Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20 ms (step) remaining time: 0:01:54

`step` is the optimizer step; with gradient accumulation several `iter` lines share one step and
only the one marked `(step)` closes it. Unmarked lines (older LitGPT prints no marker) are held and
the last one of each step is emitted when the step changes. `iter time` is per micro-iteration: it is
`step_time_s` only when iter and step advance together, else `iter_time_s`.

The lit-gpt scripts of 2023 (and their XLA variants, which print no loss) mark the iteration that
took the optimizer step instead:

    iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)
    [rank: 0] iter 34 step 35: iter time: 3372.20ms (optimizer.step)

`step` (the optimizer step count) is the step. The iteration time is the step time only on a marked
line whose step counts iterations one for one (`step` is `iter` or `iter + 1`: no accumulation).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_eta_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_LINE = re.compile(
    rf"^Epoch (?P<epoch>\d{{1,18}}(?!\d)) \| iter (?P<iter>\d{{1,18}}(?!\d)) step (?P<step>\d{{1,18}}(?!\d)) \| loss train: (?P<loss>{_NUM}), "
    rf"val: (?P<val>{_NUM}|n/a) \| iter time: (?P<ms>{_NUM}) ms(?P<marker> \(step\))?"
    rf"(?: remaining time: (?P<eta>[\d:]+(?:\.\d+)?))?\s*$"
)

_OLD_LINE = re.compile(
    rf"^iter (?P<iter>\d{{1,18}}) step (?P<step>\d{{1,18}}): (?:loss (?P<loss>{_NUM}), )?"
    rf"iter time: (?P<ms>{_NUM}) ?ms(?P<marker> \(optimizer\.step\))?\s*$"
)


class LitGPTParser(Parser):
    name = "litgpt"
    title = "LitGPT"
    triggers = ("| loss train:", "iter time: ")
    example = "Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)"
    priority = 100
    samples = (
        Sample(  # Lightning-AI/litgpt issue #1110
            "Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)\n",
            steps=((961, {"loss": 1.062, "eval_loss": 1.057, "epoch": 4, "step_time_s": 0.52946}),),
        ),
        Sample(  # Lightning-AI/litgpt issue #689: two iterations per optimizer step
            "iter 76 step 38: loss 10.8259, iter time: 197.87ms\n"
            "iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)\n"
            "iter 78 step 39: loss 10.8259, iter time: 198.00ms\n",
            steps=((38, {"loss": 10.8259, "iter_time_s": 0.19787}), (39, {"loss": 10.8259, "iter_time_s": 0.2144})),
        ),
        Sample(  # Lightning-AI/litgpt issue #519: the XLA finetune script, no loss, one iteration a step
            "[rank: 0] iter 34 step 35: iter time: 3372.20ms (optimizer.step)\n"
            "[rank: 0] iter 35 step 36: iter time: 3369.29ms (optimizer.step)\n",
            steps=((35, {"step_time_s": 3.3722}), (36, {"step_time_s": 3.36929})),
            ranks=(0, 0),
        ),
    )

    def __init__(self) -> None:
        self._held: tuple[int, dict[str, float], int, str | None] | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if text.startswith("iter "):
            return self._old_line(text, out)
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

    def _old_line(self, text: str, out: Emitter) -> bool:
        m = _OLD_LINE.match(text)
        ms = parse_number(m.group("ms")) if m is not None else None
        if m is None or ms is None:
            return False
        step, it = int(m.group("step")), int(m.group("iter"))
        one_for_one = m.group("marker") is not None and step in (it, it + 1)
        metrics: dict[str, float] = {"step_time_s" if one_for_one else "iter_time_s": ms / 1000}
        loss = parse_number(m.group("loss")) if m.group("loss") else None
        if loss is not None:
            metrics["loss"] = loss
        out.step(step, metrics)
        return True

    def finish(self, out: Emitter) -> None:
        self._release(out)

    def _release(self, out: Emitter) -> None:
        held, self._held = self._held, None
        if held is not None:
            step, metrics, line_no, time = held
            out.step(step, metrics, time=time, line=line_no)
