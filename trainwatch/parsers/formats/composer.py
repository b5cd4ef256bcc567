"""MosaicML Composer / llm-foundry console logger: a `[batch=N/M]:` header, then one indented
`Train <name>: <value>` line per metric (`Train loss/train/total: 12.0000`).

The block is held until a line that is not one of its metric lines. `srun -l` prefixes every
line with `0: `; that prefix is the rank. `[Eval batch=...]` blocks are evaluation progress: their
`Eval <name>` metrics are attached to the last training batch as `eval_<name>`.

When `max_duration` is in epochs the header names the epoch too (`[epoch=1][batch=5/5]:`, the batch
within the epoch); the step is then Composer's own count `time/batch` where the block has it.
Composer 0.1x (2022) printed one line per metric instead, each with the position:

    [epoch=0][batch=17/625]: loss/train/total: 7.1243

consecutive lines of one position are one step: `trainer/global_step` where printed, else
`epoch x batches + batch` (Composer counts epochs from 0).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_SRUN = re.compile(r"^ *(\d{1,5}): ")
_HEADER = re.compile(
    r"^\[(?P<eval>Eval )?(?:epoch=(?P<epoch>\d{1,9}(?!\d))\]\[)?batch=(?P<step>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d))\]:?"
)
_KEYED = re.compile(
    r"^\[epoch=(?P<epoch>\d{1,9}(?!\d))\]\[batch=(?P<n>\d{1,18}(?!\d))/(?P<per>\d{1,18}(?!\d))\]: "
    r"(?P<name>[^\s:][^:]*?): (?P<value>\S+)\s*$"
)
_METRIC = re.compile(r"^\s+(?P<kind>Train|Eval) (?P<name>\S+): (?P<value>\S+)\s*$")
_LR = re.compile(r"^lr-[^/]+/group0$")
_MAX_METRICS = 500
# No run takes 10^8 optimizer steps (a year at 0.3 s/step): a header total that large is the token
# or sample budget `max_duration` was given in (`[batch=1/300000000]` of an MPT-7B run), not a step
# count. It is kept as `duration_budget`, so it is never the run's step total.
BUDGET_MIN = 10**8

_NAMES = {
    "loss/train/total": "loss",
    "throughput/samples_per_sec": "samples_per_s",
    "throughput/tokens_per_sec": "tokens_per_s",
    "throughput/device/tokens_per_sec": "tokens_per_s_per_gpu",
    "throughput/device/samples_per_sec": "samples_per_s_per_gpu",
}


class ComposerParser(Parser):
    name = "composer"
    title = "Composer / llm-foundry"
    triggers = ()  # the block ends on the first line that is not a metric line
    example = "[batch=1/300000000]:\n\t Train time/batch: 0\n\t Train loss/train/total: 12.0000"
    priority = 100
    samples = (
        Sample(  # llm-foundry scripts/train/README.md: one block per batch, a metric a line
            "[batch=1/100]:\n"
            "         Train LanguageCrossEntropy: 10.9736\n"
            "         Train Perplexity: 58312.0586\n"
            "         Train loss/train/total: 10.9736\n"
            "[batch=2/100]:\n"
            "         Train LanguageCrossEntropy: 10.9724\n"
            "         Train Perplexity: 58243.8086\n"
            "         Train loss/train/total: 10.9724\n",
            steps=((1, {"loss": 10.9736, "total_steps": 100}), (2, {"loss": 10.9724})),
        ),
        Sample(  # mosaicml/examples resnet_cifar README: Composer 0.1x, one line per metric with its position
            "[epoch=0][batch=17/625]: lr-DecoupledSGDW/group0: 0.0066\n"
            "[epoch=0][batch=17/625]: trainer/global_step: 17\n"
            "[epoch=0][batch=17/625]: trainer/batch_idx: 17\n"
            "[epoch=0][batch=17/625]: memory/alloc_requests: 40239\n"
            "[epoch=0][batch=17/625]: memory/free_requests: 39497\n"
            "[epoch=0][batch=17/625]: memory/allocated_mem: 6278452575744\n"
            "[epoch=0][batch=17/625]: memory/active_mem: 1030880768\n"
            "[epoch=0][batch=17/625]: memory/inactive_mem: 663618048\n"
            "[epoch=0][batch=17/625]: memory/reserved_mem: 28137488384\n"
            "[epoch=0][batch=17/625]: memory/alloc_retries: 3\n"
            "[epoch=0][batch=17/625]: trainer/grad_accum: 2\n"
            "[epoch=0][batch=17/625]: loss/train/total: 7.1243\n",
            steps=((17, {"loss": 7.1243, "lr": 0.0066, "epoch": 0}),),
        ),
    )

    def __init__(self) -> None:
        self._step: int | None = None
        self._eval = False
        self._line = 0
        self._time: str | None = None
        self._rank: int | None = None
        self._metrics: dict[str, float] | None = None
        self._last_train: int | None = None
        self._position: str | None = None  # the `[epoch=E][batch=n/N]` of the per-line metrics being read

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        rank: int | None = None
        srun = _SRUN.match(text)
        if srun:
            rank = int(srun.group(1))
            text = text[srun.end() :]
        else:  # the runner may already have stripped the label: the raw line still has it
            raw = _SRUN.match(line.text)
            if raw:
                rank = int(raw.group(1))
        if "]: " in text and text.startswith("[epoch="):
            keyed = _KEYED.match(text)
            if keyed:
                return self._keyed(keyed, rank, line, out)
        if self._position is not None:
            self._emit(out)
        if self._metrics is not None:
            m = _METRIC.match(text)
            if m and (m.group("kind") == "Eval") == self._eval and len(self._metrics) < _MAX_METRICS:
                self._add(m.group("name"), m.group("value"))
                return True
            self._emit(out)
        if "batch=" not in text:
            return False
        m = _HEADER.match(text)
        if not m:
            return False
        self._eval = m.group("eval") is not None
        if self._eval:
            self._metrics = {}
            self._step = self._last_train
        elif m.group("epoch") is not None:  # batches of this epoch: not the run's total
            self._step = self._last_train = int(m.group("step"))
            self._metrics = {"epoch": float(int(m.group("epoch")))}
        else:
            self._step = self._last_train = int(m.group("step"))
            total = int(m.group("total"))
            self._metrics = {"duration_budget" if total >= BUDGET_MIN else "total_steps": float(total)}
        self._line = line.no
        self._time = line_time(text)
        self._rank = rank
        return True

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _keyed(self, m: re.Match[str], rank: int | None, line: Line, out: Emitter) -> bool:
        position = m.group(0)[: m.start("name")]
        if position != self._position or self._metrics is None:
            self._emit(out)
            epoch, n, per = int(m.group("epoch")), int(m.group("n")), int(m.group("per"))
            self._position, self._eval = position, False
            self._step = epoch * per + n
            self._metrics = {"epoch": float(epoch)}
            self._line, self._time, self._rank = line.no, line_time(m.group(0)), rank
        if len(self._metrics) < _MAX_METRICS:
            self._add(m.group("name"), m.group("value"))
        return True

    def _add(self, label: str, raw: str) -> None:
        value = parse_number(raw)
        if value is None or self._metrics is None:
            return
        if self._eval:
            self._metrics[f"eval_{snake(label)}"] = value
        elif _LR.match(label):
            self._metrics["lr"] = value
        else:
            self._metrics[_NAMES.get(label) or snake(label)] = value

    def _emit(self, out: Emitter) -> None:
        metrics, self._metrics = self._metrics, None
        keyed, self._position = self._position is not None, None
        if metrics and not self._eval and "epoch" in metrics:
            # Composer's own count of the batches done, where the lines have it.
            counted = metrics.pop("trainer_global_step", None) if keyed else metrics.get("time_batch")
            if counted is not None and counted.is_integer():
                self._step = self._last_train = int(counted)
        if metrics and (self._eval or len(metrics) > 1):
            out.step(self._step, metrics, rank=self._rank, time=self._time, line=self._line)
