"""ColossalAI's (legacy) `Trainer`: a tqdm bar per epoch whose postfix its metric hooks fill.

    [Epoch 0 / Train]:   0% 420/788222 [28:47<810:51:33,  3.71s/it, loss=nan, lr=2.5e-5, throughput=0.29466 sample_per_sec, 2.4123 Tflops]

The bar counts the batches of one epoch (epochs from 0), so the step is `epoch x batches + n` and
the run's total is not printed. `ThroughputHook` writes `throughput=<samples/s> sample_per_sec,
<TFLOPS> Tflops` (its second value has no key of its own). The rich logger may start right after
the bar (`...Tflops][09/30/22 02:45:43] WARNING ...`): the bar is read up to its `]`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import metric_name
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.formats._tqdm import find_bar, postfix_number

_DESC = re.compile(r"^\[Epoch (?P<epoch>\d{1,9}(?!\d)) / Train\]:?$")
_THROUGHPUT = re.compile(
    r"\bthroughput=(?P<sps>[\d.]+(?:[eE][-+]?\d+)?) sample_per_sec(?:, (?P<tflops>[\d.]+) Tflops)?"
)


class ColossalAIParser(Parser):
    name = "colossalai"
    title = "ColossalAI Trainer"
    triggers = ("Train]",)  # with its ` / ` the trigger could straddle the padding of a `n/ M` counter
    example = "[Epoch 0 / Train]:   0% 420/788222 [28:47<810:51:33,  3.71s/it, loss=2.1, lr=2.5e-5, throughput=0.29466 sample_per_sec, 2.4123 Tflops]"
    samples = (
        Sample(
            "[Epoch 1 / Train]:  50%|█████     | 5/10 [00:19<00:19,  3.71s/it, loss=2.43, lr=2.5e-5, "
            "throughput=0.29466 sample_per_sec, 2.4123 Tflops]",
            steps=((15, {"loss": 2.43, "lr": 2.5e-5, "samples_per_s": 0.29466, "tflops": 2.4123, "epoch": 1}),),
        ),
    )
    priority = 100

    def __init__(self) -> None:
        self._last: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        bar = find_bar(text)
        if bar is None:
            return False
        m = _DESC.match(bar.desc)
        if m is None:
            return False
        if bar.n <= 0:
            return True
        epoch = int(m.group("epoch"))
        step = epoch * bar.total + bar.n
        if step == self._last and line.kind is Kind.FRAME:
            return True  # the same step redrawn
        self._last = step
        metrics: dict[str, float] = {"epoch": float(epoch)}
        if bar.seconds_per_it is not None:
            metrics["step_time_s"] = bar.seconds_per_it
        for key, raw in bar.postfix:
            value = postfix_number(raw)
            if value is not None:
                metrics[metric_name(key)] = value
        t = _THROUGHPUT.search(text, bar.start, bar.end)
        if t is not None:
            metrics.pop("throughput", None)
            sps = postfix_number(t.group("sps"))
            if sps is not None:
                metrics["samples_per_s"] = sps
            if t.group("tflops"):
                tflops = postfix_number(t.group("tflops"))
                if tflops is not None:
                    metrics["tflops"] = tflops
        out.step(step, metrics)
        return True
