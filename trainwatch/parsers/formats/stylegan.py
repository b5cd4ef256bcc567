"""NVlabs' StyleGAN training loop (StyleGAN, StyleGAN2, StyleGAN2-ADA, StyleGAN3 and their forks):

    tick 1     kimg 4.0      time 1h 52m 31s   sec/tick 2049.4  sec/kimg 512.35  maintenance 4561.1 cpumem 2.22   gpumem 14.76  reserved 15.14  augment 0.004
    tick 1     kimg 6.1      lod 0.00  minibatch 32   time 12m 16s      sec/tick 648.1   sec/kimg 107.73  maintenance 30.5   gpumem 5.1

A report every tick (a few thousand images): the tick is the step, `sec/tick` its time (the
`maintenance` seconds spent on snapshots and metrics are outside it), `kimg` the thousands of
images shown so far, `gpumem` / `reserved` the device's peak and reserved GB. No loss is printed:
the losses go to TensorBoard, the FID to a JSON line (`{"results": {"fid50k_full": 432.0}, ...}`),
read as `eval_fid50k_full` at the tick before it. `Training for 25000 kimg...` is the run's length.
"""

from __future__ import annotations

import json
import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import duration_at

_TICK = re.compile(r"^\s*tick (?P<tick>\d{1,12})\s+kimg (?P<kimg>\d[\d.]*)\s+(?P<rest>.*)$")
_PAIR = re.compile(r"(?P<name>[a-z][a-z/]*) (?P<value>-?\d[\d.]*(?:[eE][-+]?\d+)?)(?=\s|$)")
_TIME = re.compile(r"time ")
_NAMES = {
    "sec/tick": "step_time_s",
    "sec/kimg": "sec_per_kimg",
    "maintenance": "maintenance_s",
    "cpumem": "cpu_mem_gib",
    "gpumem": "max_mem_gib",
    "reserved": "reserved_mem_gib",
    "augment": "augment_p",
    "lod": "lod",
    "minibatch": "batch_size",
}
_FID_HINT = '{"results": {'
_MAX_METRICS = 16


class StyleGanParser(Parser):
    name = "stylegan"
    title = "StyleGAN training loop (NVlabs)"
    triggers = ("tick ", _FID_HINT)
    example = "tick 1     kimg 4.0      time 1h 52m 31s   sec/tick 2049.4  sec/kimg 512.35  maintenance 4561.1"
    priority = 100
    samples = (
        Sample(  # NVlabs/stylegan3 issue #217: ticks, the FID of the first snapshot between them
            "tick 0     kimg 0.0      time 2m 20s       sec/tick 54.1    sec/kimg 6764.01 maintenance 86.3   "
            "cpumem 4.48   gpumem 14.13  reserved 14.45  augment 0.000\n"
            '{"results": {"fid50k_full": 432.04887476759825}, "metric": "fid50k_full", "total_time": 4555.75}\n'
            "tick 1     kimg 4.0      time 1h 52m 31s   sec/tick 2049.4  sec/kimg 512.35  maintenance 4561.1 "
            "cpumem 2.22   gpumem 14.76  reserved 15.14  augment 0.004\n",
            steps=(
                (0, {"kimg": 0.0, "step_time_s": 54.1, "max_mem_gib": 14.13, "elapsed_s": 140.0}),
                (0, {"eval_fid50k_full": 432.04887476759825}),
                (1, {"kimg": 4.0, "step_time_s": 2049.4, "augment_p": 0.004, "elapsed_s": 6751.0}),
            ),
        ),
        Sample(  # skyflynil/stylegan2 issue #2: the TensorFlow loop's `lod` and `minibatch` columns
            "tick 1     kimg 6.1      lod 0.00  minibatch 32   time 12m 16s      sec/tick 648.1   "
            "sec/kimg 107.73  maintenance 30.5   gpumem 5.1\n",
            steps=((1, {"kimg": 6.1, "batch_size": 32.0, "step_time_s": 648.1, "elapsed_s": 736.0}),),
        ),
    )

    def __init__(self) -> None:
        self._tick: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if text.lstrip().startswith(_FID_HINT):
            return self._metric(text, out)
        m = _TICK.match(text)
        if m is None:
            return False
        kimg = parse_number(m.group("kimg"))
        if kimg is None:
            return False
        metrics: dict[str, float] = {"kimg": kimg}
        rest, at = m.group("rest").rstrip(), 0
        while at < len(rest):
            if rest[at].isspace():
                at += 1
                continue
            timed = _TIME.match(rest, at)
            if timed is not None:
                parts = duration_at(rest, timed.end())
                if parts is None:
                    return False
                metrics["elapsed_s"], at = parts
                continue
            pair = _PAIR.match(rest, at)
            if pair is None:
                return False  # not this loop's line: every field is a name and its number
            value = parse_number(pair.group("value"))
            name = _NAMES.get(pair.group("name"), pair.group("name").replace("/", "_per_"))
            if value is not None:
                metrics.setdefault(name, value)
            at = pair.end()
        self._tick = int(m.group("tick"))
        out.step(self._tick, metrics)
        return True

    def _metric(self, text: str, out: Emitter) -> bool:
        """`metric_main`'s JSON line after a snapshot: its results, evaluation figures of the last tick."""
        try:
            report = json.loads(text)
        except ValueError:
            return False
        results = report.get("results") if isinstance(report, dict) else None
        if not isinstance(results, dict) or self._tick is None:
            return False
        metrics: dict[str, float] = {}
        for name, value in list(results.items())[:_MAX_METRICS]:
            if isinstance(value, int | float) and not isinstance(value, bool):
                try:
                    metrics[f"eval_{name}"] = float(value)
                except OverflowError:  # (an integer too large for a float)
                    continue
        if not metrics:
            return False
        out.step(self._tick, metrics)
        return True
