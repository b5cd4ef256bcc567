"""OLMo (allenai/OLMo `olmo.train`): one header line, then one indented `name=value` line per metric.

    2024-08-06 10:00:05.520 host:0  olmo.train:908  INFO    [step=2/739328,epoch=0]
        optim/total_grad_norm=0.0002
        train/CrossEntropyLoss=1.787e-06
        throughput/device/tokens_per_second=26,668
        System/Peak GPU Memory (MB)=53,695

The block is held until a line that is not one of its metric lines, then emitted as one step with
the header's line number and time. OLMo's throughput/device figures are per GPU.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_mem_gib, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_HEADER = re.compile(
    r"\[step=(?P<step>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d))(?:,epoch=(?P<epoch>\d{1,18}(?!\d)))?\]\s*$"
)
_METRIC = re.compile(r"^\s+(?P<name>[A-Za-z][^=]*?)=(?P<value>\S+)\s*$")
_MAX_METRICS = 500  # a block never has this many lines: stop holding

_NAMES = {
    "train/CrossEntropyLoss": "loss",
    "optim/total_grad_norm": "grad_norm",
    "optim/learning_rate_group0": "lr",
    "throughput/device/tokens_per_second": "tokens_per_s_per_gpu",
    "throughput/device/batches_per_second": "batches_per_s_per_gpu",
}


class _Block:
    __slots__ = ("line", "metrics", "step", "time")

    def __init__(self, step: int, line: int, time: str | None, metrics: dict[str, float]) -> None:
        self.step = step
        self.line = line
        self.time = time
        self.metrics = metrics


class OlmoParser(Parser):
    name = "olmo"
    title = "OLMo"
    # Empty: the indented metric lines carry nothing distinctive, and the block must end on the
    # first line that is not one of them. Lines without a header cost one substring test.
    triggers = ()
    example = "[step=100/739328]\n    train/CrossEntropyLoss=7.891"
    priority = 100
    samples = (
        Sample(  # allenai/OLMo issue #692 ("why CrossEntropyLoss is zero"): the first two steps
            "2024-08-06 09:59:26.181 intern-studio-160750:0  olmo.train:908  INFO    [step=1/739328,epoch=0]\n"
            "    optim/total_grad_norm=231.7\n"
            "    train/CrossEntropyLoss=12.18\n"
            "    train/Perplexity=195,153\n"
            "    throughput/total_tokens=1,048,576\n"
            "    throughput/total_training_Gflops=5,103,640\n"
            "    throughput/total_training_log_Gflops=15.45\n"
            "    System/Peak GPU Memory (MB)=46,911\n"
            "2024-08-06 10:00:05.520 intern-studio-160750:0  olmo.train:908  INFO    [step=2/739328,epoch=0]\n"
            "    optim/total_grad_norm=0.0002\n"
            "    train/CrossEntropyLoss=1.7872662283480167e-06\n"
            "    train/Perplexity=1.000\n"
            "    throughput/total_tokens=2,097,152\n"
            "    throughput/total_training_Gflops=10,207,281\n"
            "    throughput/total_training_log_Gflops=16.14\n"
            "    throughput/device/tokens_per_second=26,668\n"
            "    throughput/device/batches_per_second=0.0254\n"
            "    System/Peak GPU Memory (MB)=53,695\n",
            steps=(
                (1, {"total_steps": 739328, "epoch": 0, "grad_norm": 231.7, "loss": 12.18, "train_perplexity": 195153}),
                (
                    2,
                    {
                        "grad_norm": 0.0002,
                        "loss": 1.7872662283480167e-06,
                        "throughput_total_tokens": 2097152,
                        "tokens_per_s_per_gpu": 26668,
                        "batches_per_s_per_gpu": 0.0254,
                    },
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._block: _Block | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._block is not None:
            m = _METRIC.match(text)
            if m and len(self._block.metrics) < _MAX_METRICS:
                self._add(self._block.metrics, m.group("name"), m.group("value"))
                return True
            self._emit(out)
        if "[step=" not in text:
            return False
        m = _HEADER.search(text)
        if not m:
            return False
        metrics: dict[str, float] = {"total_steps": float(int(m.group("total")))}
        if m.group("epoch") is not None:
            metrics["epoch"] = float(int(m.group("epoch")))
        self._block = _Block(int(m.group("step")), line.no, line_time(text), metrics)
        return True

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _emit(self, out: Emitter) -> None:
        block, self._block = self._block, None
        if block is not None:
            out.step(block.step, block.metrics, time=block.time, line=block.line)

    @staticmethod
    def _add(metrics: dict[str, float], label: str, raw: str) -> None:
        label = label.strip()
        if label == "System/Peak GPU Memory (MB)":
            gib = parse_mem_gib(raw, default_unit="mb")
            if gib is not None:
                metrics["max_mem_gib"] = gib
            return
        value = parse_number(raw)
        if value is not None:
            metrics[_NAMES.get(label) or snake(label)] = value
