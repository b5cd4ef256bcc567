"""torchtitan: `[titan] <time> - root - INFO - step: N  loss: ...  memory: 30.21GiB(31.80%)  tps: ...  mfu: ...%`.

torchtitan computes `tps` (and the older `wps`) per device, so it is reported as
`tokens_per_s_per_gpu` (the contract keeps `tokens_per_s` for figures as printed for the whole job).
The `(31.80%)` after memory is the share of the device's memory: `mem_pct`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser
from trainwatch.parsers.timestamps import line_time

_LINE = re.compile(r"^\[titan\]\s+(?P<time>\S+ \S+)?.*?\s-\sstep:\s*(?P<step>\d{1,18}(?!\d))\s+(?P<rest>.*)$")
_PAIR = re.compile(r"([A-Za-z_]+):\s*(\S+)")
_MEM_PCT = re.compile(r"\(([0-9.]+)%\)")

_NAMES = {
    "loss": "loss",
    "grad_norm": "grad_norm",
    "tps": "tokens_per_s_per_gpu",
    "wps": "tokens_per_s_per_gpu",
    "tflops": "tflops",
    "mfu": "mfu_pct",
    "lr": "lr",
}


class TorchTitanParser(Parser):
    name = "torchtitan"
    title = "torchtitan"
    triggers = ("[titan]",)
    example = "[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%"
    priority = 100

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if not m:
            return False
        metrics: dict[str, float] = {}
        for key, raw in _PAIR.findall(m.group("rest")):
            key = key.lower()
            if key == "memory":
                gib = parse_mem_gib(raw)
                if gib is not None:
                    metrics["mem_gib"] = gib
                pct = _MEM_PCT.search(raw)
                if pct is not None:
                    value = parse_number(pct.group(1))
                    if value is not None:
                        metrics["mem_pct"] = value
                continue
            name = _NAMES.get(key) or snake(key)
            value = parse_number(raw.rstrip("%"))
            if value is not None:
                metrics[name] = value
        if not metrics:
            return False
        time = line_time(m.group("time")) if m.group("time") else None
        out.step(int(m.group("step")), metrics, time=time)
        return True
