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
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

# `(?=(\s+))\1`: the spaces after `[titan]` taken whole, as a possessive `\s++` would (Python 3.10
# has none): given back one by one, each retry scanned the rest of the line again (a line with a
# few thousand spaces there and no `step:` took seconds). The ` - step:` may then begin in those
# spaces (`[titan]  - step: 5`), as before, but not right after `[titan] ` (it did not before).
# The stamp's second word ends where its run does (`(?!\S)`): cut at each of its characters, each cut
# scanned the rest of the line (a 3,000-digit step number, which is not a step, took seconds).
_LINE = re.compile(
    r"^\[titan\](?=(\s+))\1(?P<time>\S+ \S+(?!\S))?.*?(?:\s|(?<=\s)(?<!^\[titan\]\s))-\sstep:\s*(?P<step>\d{1,18}(?!\d))\s+(?P<rest>.*)$"
)
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
    samples = (
        Sample(  # pytorch/torchtitan PR #1287 (Llama 3, `[rank0]:` prefix, GC and profiler lines between steps)
            "[rank0]:[titan] 2025-06-16 22:30:48,735 - root - INFO - [GC] Peforming periodical GC collection. 0.06 "
            "seconds.\n"
            "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: "
            "49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%\n"
            "[rank0]:[titan] 2025-06-16 22:30:50,758 - root - INFO - Dumping profiler traces at step 200\n"
            "[rank0]:[titan] 2025-06-16 22:30:50,976 - root - INFO - Finished dumping profiler traces in 0.22 "
            "seconds\n"
            "[rank0]:[titan] 2025-06-16 22:31:04,970 - root - INFO - step: 210  loss:  6.0388  memory: "
            "49.66GiB(52.28%)  tps: 5,593  tflops: 323.92  mfu: 32.75%\n",
            steps=(
                (
                    200,
                    {
                        "loss": 6.1384,
                        "mem_gib": 49.66,
                        "mem_pct": 52.28,
                        "tokens_per_s_per_gpu": 5856,
                        "tflops": 339.16,
                        "mfu_pct": 34.29,
                    },
                ),
                (210, {"loss": 6.0388, "tokens_per_s_per_gpu": 5593, "tflops": 323.92, "mfu_pct": 32.75}),
            ),
            ranks=(0, 0),
        ),
        Sample(  # pytorch/torchtitan PR #3393 (2026: grad_norm on the line)
            "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319  "
            "memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\n"
            "[rank0]:[titan] 2026-05-18 16:04:47,456 - root - INFO - step: 15  loss:  3.10680  grad_norm:  0.8587  "
            "memory:  9.46GiB(64.99%)  tps: 7,334  tflops: 0.53  mfu: 0.17%\n",
            steps=(
                (14, {"loss": 3.24405, "grad_norm": 0.8319, "mem_gib": 9.46, "mem_pct": 64.99, "mfu_pct": 0.17}),
                (15, {"loss": 3.10680, "grad_norm": 0.8587, "tokens_per_s_per_gpu": 7334, "tflops": 0.53}),
            ),
            ranks=(0, 0),
        ),
    )

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
