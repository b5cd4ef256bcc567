"""torchtune's StdoutLogger / DiskLogger lines:

    Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174
    Step 1 | loss:2.17 lr:2e-05 tokens_per_second_per_gpu:8.86 peak_memory_active:13.47 peak_memory_alloc:12.60 peak_memory_reserved:19.03

torchtune's peak memory figures are GiB (bytes / 1024**3): `peak_memory_alloc` is `max_mem_gib`.
The recipes' tqdm bar names the epoch, the global step and its loss in its description:

    1|28|Loss: 1.2151892185211182:  29%|██▊       | 29/101 [07:38<19:45, 16.46s/it]

the step is the description's (the bar counts batches of this epoch), with the bar's pace.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.formats._tqdm import find_bar

_LINE = re.compile(r"^Step (?P<step>\d{1,18}(?!\d)) \| (?P<rest>[A-Za-z_]\w*:\S+(?: [A-Za-z_]\w*:\S+)*)\s*$")

_BAR_DESC = re.compile(r"(?:^|[\]:\s])(?P<epoch>\d{1,9})\|(?P<step>\d{1,18})\|Loss: (?P<loss>\S+)$")

_NAMES = {
    "tokens_per_second_per_gpu": "tokens_per_s_per_gpu",
    "peak_memory_alloc": "max_mem_gib",
}


class TorchtuneParser(Parser):
    name = "torchtune"
    title = "torchtune"
    triggers = ("Step ", "|Loss: ")
    example = "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174"
    priority = 100
    samples = (
        Sample(  # pytorch/torchtune PR #2620: a multi-node run's bar frames, rank-labelled
            "[trainer0|0]:1|25|Loss: 1.2621808052062988:  26%|██▌       | 26/101 [06:45<17:27, 13.96s/it]\n"
            "[trainer0|0]:1|28|Loss: 1.2151892185211182:  29%|██▊       | 29/101 [07:38<19:45, 16.46s/it]\n",
            steps=(
                (25, {"loss": 1.2621808052062988, "epoch": 1}),
                (28, {"loss": 1.2151892185211182, "step_time_s": 16.46}),
            ),
        ),
        Sample(
            "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174\n",
            steps=((1, {"loss": 2.085338592529297, "lr": 2e-05, "tokens_per_s_per_gpu": 57.828881833956174}),),
        ),
    )

    def __init__(self) -> None:
        self._last_bar_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "|Loss: " in text:
            return self._bar(text, out)
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

    def _bar(self, text: str, out: Emitter) -> bool:
        bar = find_bar(text)
        m = _BAR_DESC.search(bar.desc) if bar is not None else None
        if bar is None or m is None:
            return False
        loss = parse_number(m.group("loss"))
        step = int(m.group("step"))
        if loss is None or step == self._last_bar_step:
            return True  # the same step redrawn
        self._last_bar_step = step
        metrics = {"loss": loss, "epoch": float(m.group("epoch"))}
        if bar.seconds_per_it is not None:
            metrics["step_time_s"] = bar.seconds_per_it
        out.step(step, metrics)
        return True
