"""Fallback for custom training loops: any repeated progress line the field reader understands.

    [0] [1/10: 0/1875 (0%)] epoch=1.0000 step=1.0000 dt=0.3665 batch_acc=0.1094 batch_loss=0.0090
    step 0 | loss: 10.938573 | lr: 6.0000e-05 | norm: 27.0159 | time: 17830.71ms | tokens/sec: 29403.65
    iter 120: loss 2.4410, time 61.02ms, data_time 3.11ms, mfu 14.20%
    {"step": 10, "loss": 2.1, "lr": 0.0003}
    Epoch: [2][ 40/2502]	Time  0.412 ( 0.530)	Loss 5.1 (5.4)
    Epoch: 007, Loss: 0.9120, Train: 0.77

It sees every line no other parser understood, reads it with `fields.read_fields`, and must not guess:
- a line qualifies only with a counter (`step 5`, `iter: 5`, `global_step=5`, `[5/100]`, `5/100`,
  an epoch) and at least one other numeric field;
- a line is only emitted once its shape (the line with every value masked) has been seen at least
  twice with a counter that moves forward; the lines held until then are emitted first, in order.
The step: an explicit step counter as printed; else an `n/M` counter, counted on across epochs
(`(epoch - first epoch) x M + n`, as runners count iterations) when the line names its epoch; else
the epoch itself when that is all a line per epoch has (the metric `epoch` says so too).
Config dumps (`lr ....... 0.001`, `--train_steps = 20000`), one-off lines and lines without a
counter therefore never become steps.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.fields import Reading, read_fields
from trainwatch.parsers.timestamps import line_time

_PRECHECK = re.compile(r"\d")

MAX_TEMPLATES = 64  # shapes remembered per source (bounded memory)
MAX_HELD = 4  # candidate lines held per shape before it is confirmed


@dataclass
class _Held:
    step: int
    metrics: dict[str, float]
    line: int
    time: str | None


@dataclass
class _Template:
    confirmed: bool = False
    held: list[_Held] = field(default_factory=list)
    first_epoch: float | None = None  # epochs are counted from the first one this shape printed


def _step_of(reading: Reading, template: _Template) -> tuple[int, dict[str, float]] | None:
    """The step a reading reports and its metrics (with `epoch` and `total_steps` where known)."""
    metrics = dict(reading.metrics)
    if reading.epoch is not None:
        metrics.setdefault("epoch", reading.epoch)
    if reading.step is not None:
        if reading.total is not None and reading.total >= reading.step:
            metrics.setdefault("total_steps", float(reading.total))
        return reading.step, metrics
    if reading.inner is not None and reading.inner_total is not None:
        if reading.evaluating:
            return None
        n, per = reading.inner, reading.inner_total
        if reading.epoch is None or not reading.epoch.is_integer():
            metrics.setdefault("total_steps", float(per))
            return n, metrics
        if template.first_epoch is None:
            template.first_epoch = reading.epoch
        base = 1 if template.first_epoch >= 1 else 0
        epochs = int(reading.epoch) - base
        if epochs < 0:
            return None
        if reading.epoch_total is not None:
            metrics.setdefault("total_steps", float((reading.epoch_total + 1 - base) * per))
        return epochs * per + n, metrics
    if reading.epoch is not None and reading.epoch.is_integer() and reading.epoch >= 0:
        if reading.epoch_total is not None:
            metrics.setdefault("total_steps", float(reading.epoch_total))
        return int(reading.epoch), metrics
    return None


def parse_fields(text: str) -> tuple[int, dict[str, float]] | None:
    """The step and numeric fields of a lone line (no epoch counting across lines), or None."""
    reading = read_fields(text)
    if reading is None or not reading.metrics:
        return None
    return _step_of(reading, _Template())


class GenericParser(Parser):
    name = "generic"
    title = "Generic progress lines (any key/value syntax)"
    triggers = ()
    example = "step 0 | loss: 10.938573 | lr: 6.0000e-05 | norm: 27.0159 | time: 17830.71ms"
    priority = 900

    def __init__(self) -> None:
        self._templates: OrderedDict[str, _Template] = OrderedDict()

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if not _PRECHECK.search(text):
            return False
        reading = read_fields(text)
        if reading is None or not reading.metrics:
            return False
        key = reading.shape
        template = self._templates.get(key)
        if template is None:
            template = _Template()
            self._templates[key] = template
            if len(self._templates) > MAX_TEMPLATES:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(key)
        got = _step_of(reading, template)
        if got is None:
            return False
        step, metrics = got
        if template.confirmed:
            out.step(step, metrics)
            return True
        held = template.held
        if held and step > held[-1].step:
            for h in held:
                out.step(h.step, h.metrics, time=h.time, line=h.line)
            template.held = []
            template.confirmed = True
            out.step(step, metrics)
            return True
        if held and step <= held[-1].step:
            held.clear()
        held.append(_Held(step, metrics, line.no, line_time(text)))
        del held[:-MAX_HELD]
        return False
