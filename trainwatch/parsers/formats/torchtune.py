"""torchtune's StdoutLogger / DiskLogger lines:

    Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174
    Step 1 | loss:2.17 lr:2e-05 tokens_per_second_per_gpu:8.86 peak_memory_active:13.47 peak_memory_alloc:12.60 peak_memory_reserved:19.03

torchtune's peak memory figures are GiB (bytes / 1024**3): `peak_memory_alloc` is `max_mem_gib`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser

_LINE = re.compile(r"^Step (?P<step>\d{1,18}(?!\d)) \| (?P<rest>[A-Za-z_]\w*:\S+(?: [A-Za-z_]\w*:\S+)*)\s*$")

_NAMES = {
    "tokens_per_second_per_gpu": "tokens_per_s_per_gpu",
    "peak_memory_alloc": "max_mem_gib",
}


class TorchtuneParser(Parser):
    name = "torchtune"
    title = "torchtune"
    triggers = ("Step ",)
    example = "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174"
    priority = 100

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _LINE.match(text)
        if not m:
            return False
        metrics: dict[str, float] = {}
        for pair in m.group("rest").split():
            key, _, raw = pair.partition(":")
            value = parse_number(raw)
            if value is not None:
                metrics[_NAMES.get(key) or metric_name(key)] = value
        if not metrics:
            return False
        out.step(int(m.group("step")), metrics)
        return True
