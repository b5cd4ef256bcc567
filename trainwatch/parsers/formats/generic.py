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
Nested tqdm bars (`for epoch in tqdm(range(E), desc="Train epoch")` around a bar of the epoch's
steps, `Train step of epoch 0: 5/1563`): the outer bar's total is the number of epochs, so the run
has E x (steps of an epoch) steps.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import CONTRACT_METRICS, RATES, metric_name, settle_sole_loss
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import EVAL_WORD, Reading, prefix_end, read_fields
from trainwatch.parsers.formats import _escaped as escaped
from trainwatch.parsers.formats._tqdm import Bar, find_bar
from trainwatch.parsers.hints import Hinted
from trainwatch.parsers.timestamps import line_time

_PRECHECK = re.compile(r"\d|nan|NaN|inf")
# Lines that report a failure, whatever numbers they hold (`[PG 1 Rank 0] Exception ... detected by
# watchdog at work: 1580`): never a step's figures.
_NOT_PROGRESS = Hinted(
    r"\bException\b|Traceback|[Ww]atchdog|ProcessGroupNCCL|\bNCCL (?:error|WARN)",
    ("Exception", "Traceback", "atchdog", "NCCL"),
)
# The description of a bar that counts epochs: `Epoch`, `Epochs`, `Train epoch`, `training epochs`.
_EPOCH_BAR = re.compile(r"(?:train(?:ing)?\s+)?epochs?", re.I)
# A bar named for the training loop itself: at its total, training is done (x-transformers
# `training: 100%|...| 100000/100000`, diffusers / kohya `Steps: 100%|...| 83300/83300`).
_TRAINING_BAR = re.compile(r"(?:train(?:ing)?|steps?|global[ _]steps?|iterations?|iters?)", re.I)
# Bars that count setup work, not training steps (the hub's and datasets' bars, vLLM's, a
# checkpoint's shards): `Loading checkpoint shards: 2/2`, `Map (num_proc=8): 5000/5000`,
# `Fetching 11 files`, `Generating train split`, `Capturing CUDA graph shapes`.
_SETUP_BAR = re.compile(
    r"\b(?:load(?:ing)?|download(?:ing)?|fetch(?:ing)?|upload(?:ing)?|map|filter|generat(?:e|ing)|tokeniz\w*"
    r"|group(?:ing)?\s+texts|resolv(?:e|ing)|extract(?:ing)?|checksums?|convert(?:ing)?|sav(?:e|ing)|writ(?:e|ing)"
    r"|preprocess\w*|process(?:ing|ed)|captur(?:e|ing)|apply(?:ing)?|adding|truncat(?:e|ing)|packing|shuffl\w*"
    r"|sort(?:ing)?|creat(?:e|ing)|build(?:ing)?|compil(?:e|ing)|caching|index(?:ing)?|verify(?:ing)?|copy(?:ing)?"
    r"|reading|deduplicat\w*|formatting|casting|flattening|concatenat\w*|encod(?:e|ing)|sampling)\b",
    re.I,
)
# Units of a bar that counts data, not steps (`60.1MB/s`, `3200.11 examples/s`, `1.2s/file`).
_DATA_UNITS = frozenset(
    "b kb mb gb tb kib mib gib tib ib examples example ex files file prompts prompt shards shard docs documents"
    " tokens toks tok lines rows".split()
)

# A line that starts with its epoch (`Epoch 0/139`, `Epoch:  7`, `Epoch 0/100, Batch 17/29316`), not one
# that mentions epochs (`1 epoch = 20 batches`).
_EPOCH_HEADER = re.compile(
    r"(?:^|[\s:|>=*-])epoch\b[\s:#\[]*\d+(?:\s*(?:/|of)\s*\d+)?\]?(?:[\s,]*batch|[\s,]*(?:[-=*#<>][-=*#<>\s]*)?$)",
    re.I,
)  # (each run of spaces in one place: `[\s,]*` beside `[-=*#<>\s]*` split a long run every way)

# A line that ends in a rule: ` ---- batch: 040 ----` (three marks: `{3,}` searched from each mark of
# a long run counted the rest of it)
_BANNER = re.compile(r"[-=*#]{3}\s*$")
# A line indented like this right after a progress line continues it: Lightning's Rich bar wraps
# its metrics far to the right, Lasagne's examples print `  training loss:\t\t2.47` under the epoch.
_WRAP_INDENT = ("  ", "\t")
_DANGLING_NAME = re.compile(r"[A-Za-z_][\w/.-]*\s*[:=]\s*$")

_BLOCK_ITEM = re.compile(r"""^\s*\{?\s*(?:"[^"]{1,80}"|'[^']{1,80}')\s*:\s*\S""")
MAX_BLOCK_LINES = 200
MAX_HEADER_METRICS = 200
_KEEP_IN_EVALUATION = frozenset({"lr", "epoch", "total_steps", "loss_scale"})  # settings, not the evaluation's figures

MAX_TEMPLATES = 64  # shapes remembered per source (bounded memory)
MAX_HELD = 4  # candidate lines held per shape before it is confirmed
# A line that mentions a step rather than reports one (`Resuming from step 5000, loss 2.3`, `Best model at step
# 3000`): never a lone report.
_MENTION = re.compile(
    r"[Rr]esum|[Rr]estor|[Ll]oad|[Bb]est\b|[Cc]heckpoint|[Ss]av(?:e|ed|ing)\b|[Ff]rom step|[Ss]topp|[Ff]inal\b|[Ff]inish"
)
_MANY_EPOCHS = 20  # (`_counts_the_run`)
# Figures that say a line reports progress as it happens (a rate or a step's time), not a summary.
_PACE = RATES | {"step_time_s"}
UNCOUNTED_REPEATS = 3  # a loss line without any counter is progress once its shape printed this often


_NAN_WATCHED = ("loss", "grad_norm", "eval_loss")  # (as the runner's merge watches a step's)


def _evaluation(metrics: dict[str, float]) -> bool:
    """Figures of an evaluation only (no training loss beside them)."""
    return "loss" not in metrics and any(name.startswith("eval_") for name in metrics)


@dataclass
class _Held:
    step: int
    metrics: dict[str, float]
    line: int
    time: str | None
    named: bool = False  # its step is a named step counter's (`step: 905`), not a batch's or an epoch's


@dataclass
class _Header:
    """A line naming a step with no value, and the `key: value` lines under it (Coqui's trainer:
    `--> STEP: 0/3984 -- GLOBAL_STEP: 0`, then `     | > loss: 0.1169  (0.1169)` ...)."""

    reading: Reading
    line: int
    time: str | None
    evaluation: bool = False  # an evaluation's header (`Eval epoch: 4`): its figures are the evaluation's
    # An epoch's header takes one new figure a line (`\tMean training loss: 2.4648.`, `\tTop1: 25.07%`):
    # lines of several figures, or of one it has, are progress lines of their own (MonoCon's bar lines)
    one_a_line: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    last: int = 0  # the line it took last (0: none yet)

    def takes(self, text: str, reading: Reading, line_no: int) -> bool:
        """A line of values with no counter of its own is one of the header's: indented, or right
        under it (`current step: 94th step`, then `batch loss:3.179167`)."""
        if reading.step is not None or reading.inner is not None or not reading.metrics:
            return False
        if not text[:1].isspace() and line_no != (self.last or self.line) + 1:
            return False
        if len(self.metrics) >= MAX_HEADER_METRICS:
            return False
        if self.one_a_line and (
            len(reading.metrics) > 1 or reading.epoch is not None or not self.metrics.keys().isdisjoint(reading.metrics)
        ):
            return False  # (`##### Epoch 3 #####`, then `Epoch 3 - Batch loss: 0.24` lines: each its own)
        for name, value in reading.metrics.items():
            self.metrics.setdefault(_evaluated(name) if self.evaluation else name, value)
        self.last = line_no
        return True


def _evaluated(name: str) -> str:
    """A figure under an evaluation's header: `loss` is its `eval_loss`, `top1_pct` its `val_top1_pct`
    (a setting or a counter keeps its name)."""
    if name.startswith(("eval_", "val_")) or name in _KEEP_IN_EVALUATION:
        return name
    return metric_name("val_" + name)


@dataclass
class _Wrap:
    """The last progress line, for the metrics wrapped onto the lines under it."""

    line: int
    step: int
    held: _Held | None  # the line is still held (its shape not yet confirmed): the metrics join it
    tail: str = ""  # a name whose value is on the next wrapped line
    reported: Mapping[str, float] | None = None  # the figures the line reported (an emitted line's)


@dataclass
class _Template:
    confirmed: bool = False
    held: list[_Held] = field(default_factory=list)
    first_epoch: float | None = None  # epochs are counted from the first one this shape printed
    uncounted: list[tuple[dict[str, float], int, str | None]] = field(default_factory=list)  # held, no counter
    uncounted_seen: int = 0  # times this shape printed a loss with no counter at all
    counts_run: bool | None = None  # its `Step [n/M]` beside `Epoch [e/E]` counts the run (`_counts_the_run`)
    per_epoch: bool = False  # its step counter printed the same value in every epoch: the epoch counts
    clock: list[tuple[int, float]] = field(default_factory=list)  # its last (step, step time) pairs
    elapsed: bool | None = None  # its `step time` is the run's clock (`_is_clock`); None: not known yet
    clock_looks: int = 0  # the prints looked at for a clock


# A "step time" that is the run's clock: every print larger, by what the steps between took, and about
# the pace times the step (OpenNMT-py's `7887 sec`, ParlAI's `time`, DCGAN's `time: 299.8392`, `step 4360
# | loss 0.195 | 2137.9s`). From the fourth such print on it goes out as `elapsed_s` (the pace is then taken
# from it, `diagnosis/cadence.py`): read as a step time it made the run look 30 minutes a step, its ETA days
# and its stall threshold hours. Four prints decide: three rises in a row, each at the pace the clock's value
# over its step says (within 25 %), are no step time's noise (two prints were, in llama2.c's `9832.19ms`,
# three in pyiqa's `time (data): 1.886 (0.52)`). A print lower than the one before sends the figure back to
# `step_time_s` for good.
_CLOCK_RATIO = 1.25
_CLOCK_POINTS = 4
# Prints looked at before the figure is taken for a step time for good (the lookups stop: a clock's start-up
# offset makes its value over its step run above its pace for the first prints, 50 of them for a minute's
# start-up at half a second a step printed every 10 steps)
_CLOCK_LOOKS = 256


def _near(a: float, b: float) -> bool:
    return b / _CLOCK_RATIO <= a <= b * _CLOCK_RATIO


def _is_clock(points: list[tuple[int, float]]) -> bool:
    rates = []
    for (s0, v0), (s1, v1) in itertools.pairwise(points):
        if not (s1 > s0 > 0 and v1 > v0 > 0):
            return False
        rate = (v1 - v0) / (s1 - s0)
        if not _near(rate, v1 / s1):
            return False
        rates.append(rate)
    return all(_near(a, b) for a, b in itertools.pairwise(rates))


def _step_of(reading: Reading, template: _Template) -> tuple[int, dict[str, float]] | None:
    """The step a reading reports and its metrics (with `epoch` and `total_steps` where known)."""
    metrics = dict(reading.metrics)
    if reading.epoch is not None:
        metrics.setdefault("epoch", reading.epoch)
    if (
        reading.step is not None
        and reading.total is not None
        and reading.epoch_total is not None
        and not reading.step_global
        and not _counts_the_run(reading, template)
    ):
        # `epoch: 2/300, iter: 10/12` (YOLOX): both counted against their totals, the iteration within the epoch
        # (not `total step: [10/640000]`, which counts the whole run)
        reading = replace(reading, step=None, total=None, inner=reading.step, inner_total=reading.total)
    if reading.step is not None:
        if reading.total is not None and reading.total >= reading.step:
            metrics.setdefault("total_steps", float(reading.total))
        return reading.step, metrics
    if reading.inner is not None and reading.inner_total is None:  # `Epoch 0, batch 500`: as printed
        return None if reading.evaluating else (reading.inner, metrics)
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


# What a line must carry besides `step n/M` to be progress the first time its shape prints.
_REPORTED = frozenset(
    {"loss", "eval_loss", "lr", "grad_norm", "loss_scale", "step_time_s", "tokens_per_s", "samples_per_s"}
)


def _counts_the_run(reading: Reading, template: _Template) -> bool:
    """`Epoch [191/1000], Step [115650/608000]` (FastSpeech2): the step is where a run of `total` steps
    over `epoch_total` epochs stands in this epoch, so it counts the run, not the epoch's batches
    (YOLOX's `epoch: 2/300, iter: 10/12`, MindOCR's `epoch: [12/20] step: [700/4468]`). Only with
    many epochs, where a batch counter falls in that window by chance (3 epochs' worth of the total)
    seldom; the shape's first reading decides for all its lines (a run's steps never switch)."""
    if template.counts_run is not None:
        return template.counts_run
    assert reading.step is not None and reading.total is not None and reading.epoch_total
    if reading.epoch is None or reading.epoch < 2:
        return False  # (in the first epoch both readings give the same step: not decided yet)
    per_epoch = reading.total / reading.epoch_total
    template.counts_run = (
        reading.epoch_total >= _MANY_EPOCHS
        and (reading.epoch - 2) * per_epoch <= reading.step <= (reading.epoch + 1) * per_epoch
    )
    return template.counts_run


def _counted_report(reading: Reading) -> bool:
    """A training report on its own: a named step counter against its total (`Iter: 0/2495`, `step 5/100`)
    and a training figure. A run that dies after its first report printed that shape once; held
    until the shape repeated, the report was never read (Kaldi's `train.py`)."""
    if reading.evaluating:
        return False
    if reading.step is not None:
        return reading.total is not None and reading.step <= reading.total and not _REPORTED.isdisjoint(reading.metrics)
    # (an unnamed `[0/300000] Train loss: 4.26, Valid loss: 3.06` with no epoch counts the run: the
    # clovaai text-recognition trainer's report, once per validation interval)
    return (
        reading.inner is not None
        and reading.inner_total is not None
        and reading.shape.startswith("[#/#]")  # (not Keras' `313/313 ━━━━`, a count within an epoch)
        and reading.epoch is None
        and reading.inner <= reading.inner_total
        and "loss" in reading.metrics
    )


def _evaluation_only(metrics: dict[str, float]) -> bool:
    """Whether a reading's figures are an evaluation's only (beside the run's epoch and total)."""
    names = [n for n in metrics if n not in ("epoch", "total_steps")]
    return bool(names) and all(n.startswith("eval_") for n in names)


def _clock_time(template: _Template, metrics: dict[str, float], step: int) -> None:
    """Rename a clock's `step_time_s` to `elapsed_s` in a report about to go out (in place)."""
    value = metrics.get("step_time_s")
    if value is None:
        return
    clock = template.clock
    if template.elapsed is None:
        template.clock_looks += 1
        if template.clock_looks > _CLOCK_LOOKS:
            template.elapsed = False  # (a step time: the shape's first prints would have shown a clock)
            clock.clear()
            return
        clock.append((step, value))
        if len(clock) > _CLOCK_POINTS:
            del clock[0]
        if len(clock) == _CLOCK_POINTS and _is_clock(clock):
            template.elapsed = True
    elif template.elapsed:
        if value < clock[-1][1]:
            # (a clock never goes back: a step time it is from here on; a clock may rise more than its
            # pace between two prints, an evaluation or a sample saved between them)
            template.elapsed = False
            return
        clock.append((step, value))
        del clock[0]
    if template.elapsed:
        metrics["elapsed_s"] = metrics.pop("step_time_s")


def _release(out: Emitter, held: list[_Held]) -> None:
    """Held lines go out as the steps they were, with their own line and time."""
    for h in held:
        out.step(h.step, h.metrics, time=h.time, line=h.line)


def parse_fields(text: str) -> tuple[int, dict[str, float]] | None:
    """The step and numeric fields of a lone line (no epoch counting across lines), or None."""
    reading = read_fields(text)
    if reading is None or not reading.metrics:
        return None
    return _step_of(reading, _Template())


# An evaluation bar's description (`Validation DataLoader 0`, `Evaluating`, `test-clean`), not a run's name
# that holds the word after another (ai-toolkit's `lokr-test-2: 10%|...`).
_EVAL_DESC = re.compile(r"(?<!\w-)(?<!\w_)" + EVAL_WORD.pattern, re.I)


# The names of a report's figures beside the contract's: a loss's or an evaluation's.
_BEST = re.compile(r"(?:best|min|max|prev|previous|lowest|highest)_")
_FIGURE = re.compile(
    r"^(?:\w+_)?"
    r"(?:loss|acc|accuracy|auc|ap|f1|ppl|perplexity|iou|miou|dice|map|bleu|wer|cer|score|reward|return)(?:_|$)"
)
_STEPS_DESC = re.compile(r"\b(?:[Ss]teps?|STEPS?|[Gg]lobal[ _][Ss]tep)\s*\Z")


def _bar_reading(bar: Bar) -> Reading | None:
    """A tqdm bar as a reading: its description names the epoch, its postfix holds metrics."""
    if bar.n <= 0 or _EVAL_DESC.search(bar.desc) or _SETUP_BAR.search(bar.desc):
        return None
    if bar.unit.lower() in _DATA_UNITS:
        return None
    desc = read_fields(bar.desc.replace(" #", " ")) if bar.desc else None  # `Epoch #1`
    parts = [f"{k}={v}" for k, v in bar.postfix] + list(bar.postfix_text)
    post = read_fields(", ".join(parts)) if parts else None
    metrics = dict(post.metrics) if post is not None else {}
    if desc is not None:  # `epoch:1 loss:1.0085:  59%|...`: a description that carries the metrics
        for name, value in desc.metrics.items():
            metrics.setdefault(name, value)
    if bar.seconds_per_it is not None:
        metrics.setdefault("step_time_s", bar.seconds_per_it)
    # The bar is the line's counter: its only (or total) loss is the loss, as beside a counter in
    # text (`[losses/total_loss: 0.22 | losses/policy_loss: 0.13]:  2%|...| 76/3200`, trlx)
    settle_sole_loss(metrics)
    epoch = desc.epoch if desc is not None else None
    step = desc.step if desc is not None and desc.step is not None and desc.step > 0 else None
    shape = "bar " + (desc.shape if desc is not None else "") + " | " + (post.shape if post is not None else "")
    total = bar.total or None  # 0: the bar does not know its total
    if desc is not None and step is not None and desc.total is not None and step != bar.n:
        # `Training Epoch: 1/3, step 13/36 completed (loss: 0.097):  33%|...| 3/9` (llama-recipes): the
        # description counts the steps, the bar something else (its rate is not the step's)
        if bar.seconds_per_it is not None and metrics.get("step_time_s") == bar.seconds_per_it:
            del metrics["step_time_s"]
        if epoch is not None:
            metrics.setdefault("epoch", epoch)
        return Reading(shape, metrics, step=step, total=desc.total)
    if epoch is not None and _STEPS_DESC.search(bar.desc):
        # `Epoch 11/100, Steps:  20%|...| 4680/22900` (SimpleTuner, diffusers' scripts): the bar counts the
        # run's steps, the epoch is where they are
        metrics.setdefault("epoch", epoch)
        return Reading(shape, metrics, step=bar.n, total=total)
    if epoch is not None and total is None:
        # `Epoch #1: 50001it [00:40, ...]`: batches of an epoch whose size is unknown, so no count
        # across epochs: the epoch is the step (its bar's last line is the epoch's report)
        return Reading(shape, metrics, epoch=epoch)
    if epoch is not None:  # `Epoch 3: 64/64 [...]`: batches within the epoch
        return Reading(shape, metrics, epoch=epoch, inner=bar.n, inner_total=total)
    if step is not None and step != bar.n:
        return None  # a bar counting something else within a step
    return Reading(shape, metrics, step=bar.n, total=total)


class GenericParser(Parser):
    name = "generic"
    title = "Generic progress lines (any key/value syntax)"
    triggers = ()
    example = "step 0 | loss: 10.938573 | lr: 6.0000e-05 | norm: 27.0159 | time: 17830.71ms"
    priority = 900
    samples = (
        Sample(  # PaddlePaddle/PaddleSeg PR #928: `key: v` fields, an `iter: n/N` counter
            "2021-03-30 06:55:57 [INFO]\t[TRAIN] epoch: 1, iter: 20/500, loss: 2.0859, lr: 0.009657, batch_cost: "
            "0.5344, reader_cost: 0.07273, ips: 3.7425 samples/sec | ETA 00:04:16\n"
            "2021-03-30 06:56:04 [INFO]\t[TRAIN] epoch: 1, iter: 40/500, loss: 1.8769, lr: 0.009295, batch_cost: "
            "0.3483, reader_cost: 0.00205, ips: 5.7421 samples/sec | ETA 00:02:40\n",
            steps=(
                (
                    20,
                    {
                        "loss": 2.0859,
                        "lr": 0.009657,
                        "step_time_s": 0.5344,
                        "data_time_s": 0.07273,
                        "samples_per_s": 3.7425,
                    },
                ),
                (40, {"loss": 1.8769, "epoch": 1, "total_steps": 500}),
            ),
        ),
        Sample(  # ROCm/pytorch issue #1147 (pytorch/examples imagenet): `key v (avg)` fields, a `[n/N]` counter
            "Epoch: [0][   1/1424]   Time 60.000 (60.000)    Data 15.133 (15.133)    Loss 6.9078e+00 (6.9078e+00)    "
            "Acc@1   0.00 (  0.00)   Acc@5   0.33 (  0.33)\n"
            "Epoch: [0][  21/1424]   Time  1.175 ( 4.022)    Data  0.001 ( 0.722)    Loss 6.8997e+00 (6.9054e+00)    "
            "Acc@1   0.33 (  0.11)   Acc@5   0.78 (  0.60)\n",
            steps=(
                (1, {"loss": 6.9078, "step_time_s": 60.0, "data_time_s": 15.133, "epoch": 0}),
                (21, {"loss": 6.8997, "step_time_s": 1.175}),
            ),
        ),
        Sample(  # ardiya/HashtagPrediction issue #6 (TF-Slim): `key = v` fields, the loss turns nan
            "INFO:tensorflow:global step 2457: loss = 0.6953 (1.61 sec/step)\n"
            "INFO:tensorflow:global step 2458: loss = nan (2.34 sec/step)\n"
            "INFO:tensorflow:global step 2459: loss = nan (1.50 sec/step)\n",
            steps=((2457, {"loss": 0.6953, "step_time_s": 1.61}), (2458, {"loss": float("nan"), "step_time_s": 2.34})),
            events=("nan",),
        ),
        Sample(  # facebookresearch/fairseq issue #2493: JSON epoch summaries, one line per epoch
            '2021-01-05 23:13:26 | INFO | train | {"epoch": 61, "train_loss": "531.445", "train_ntokens": "9392.23", '
            '"train_nsentences": "87.1935", "train_nll_loss": "4.934", "train_wps": "2965.4", "train_ups": "0.32", '
            '"train_wpb": "9392.2", "train_bsz": "87.2", "train_num_updates": "1883", "train_lr": "5e-05", '
            '"train_gnorm": "73.892", "train_loss_scale": "0.5", "train_train_wall": "97", "train_wall": "7159"}\n'
            "2021-01-05 23:13:26 | INFO | fairseq.trainer | begin training epoch 62\n"
            "2021-01-05 23:15:06 | INFO | fairseq_cli.train | end of epoch 62 (average epoch stats below)\n"
            '2021-01-05 23:15:06 | INFO | train | {"epoch": 62, "train_loss": "531.664", "train_ntokens": "9392.23", '
            '"train_nsentences": "87.1935", "train_nll_loss": "4.936", "train_wps": "2933.6", "train_ups": "0.31", '
            '"train_wpb": "9392.2", "train_bsz": "87.2", "train_num_updates": "1914", "train_lr": "5e-05", '
            '"train_gnorm": "71.722", "train_loss_scale": "0.5", "train_train_wall": "99", "train_wall": "7258"}\n',
            steps=(
                (
                    61,
                    {
                        "loss": 531.445,
                        "lr": 5e-05,
                        "grad_norm": 73.892,
                        "loss_scale": 0.5,
                        "tokens_per_s": 2965.4,
                        "epoch": 61,
                    },
                ),
                (62, {"loss": 531.664, "grad_norm": 71.722}),
            ),
        ),
        Sample(  # pyg-team/pytorch_geometric issue #783: one line per epoch, nan from the start
            "Epoch: 001, LR: 0.001000, Loss: nan, Validation MAE: nan, Test MAE: nan\n"
            "Epoch: 002, LR: 0.001000, Loss: nan, Validation MAE: nan, Test MAE: nan\n"
            "Epoch: 003, LR: 0.001000, Loss: nan, Validation MAE: nan, Test MAE: nan\n",
            steps=((1, {"lr": 0.001, "loss": float("nan"), "epoch": 1}), (3, {"loss": float("nan")})),
            events=("nan",),
        ),
    )

    def __init__(self) -> None:
        self._templates: OrderedDict[str, _Template] = OrderedDict()
        # Progress already confirmed: a line of a new shape that goes on from it (a field that
        # appears from some step on, `grad_norm` after warm-up) is progress too.
        self._last_step: int | None = None
        self._last_bar_step: int | None = None
        self._uncounted_progress = False
        self._epochs: int | None = None  # the total of a bar counting epochs
        self._bar_finished = False
        self._batch_counted = False  # a step or batch counter was read: epochs alone no longer number steps
        # the epoch (and batch) a header line announced: `Epoch 3/10`, `Epoch 0/100, Batch 17/29316`
        self._epoch_context: Reading | None = None
        self._wrap: _Wrap | None = None
        self._block: list[str] | None = None  # the lines of a dict printed over several lines, until it closes
        self._header: _Header | None = None  # a step named on a line of its own, its values on the lines under it

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if escaped.CR in text and "%|" in text:
            # a bar redrawn under rsyslog / SageMaker (`#015` for each `\r`): each frame as the terminal showed it
            *shown, last = escaped.frames(text) or [""]
            understood = False
            for frame in shown:
                understood = self._feed(frame, replace(line, text=frame, kind=Kind.FRAME), out) or understood
            return self._feed(last, replace(line, text=last), out) or understood
        return self._feed(text, line, out)

    def _feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._block is not None and line.kind is Kind.LINE:
            return self._in_block(text, line, out)
        if text.startswith("{", len(text) - len(text.lstrip())) and "}" not in text and _BLOCK_ITEM.search(text):
            self._block = [text.strip()]  # `{"accuracy_cls": 0.92,` a dict printed over several lines
            return True
        if not _PRECHECK.search(text) or _NOT_PROGRESS.search(text):
            return False
        bar = find_bar(text, open_total=True) if "/" in text else None
        if bar is not None:
            understood = self._on_bar(bar, out)
            rest = text[bar.end :]
            if line.kind is not Kind.FRAME and _PRECHECK.search(rest) and not rest.lstrip().startswith("{"):
                # `... 3.20it/s]training loss: 4.71`: a message printed over the bar is a line of its own
                understood = self._on_text(rest, line, out) or understood
            return understood
        if line.kind is Kind.FRAME:
            return False
        return self._on_text(text, line, out)

    def _in_block(self, text: str, line: Line, out: Emitter) -> bool:
        """The lines of a pretty-printed dict (`json.dumps(indent=2)`, `pprint`), read as one line at its
        closing brace; a line that is not one of its items ends it unread (it is a line of its own)."""
        block = self._block or []
        body = text.strip()
        closing = body.endswith("}")
        if not (_BLOCK_ITEM.match(body) or body == "}") or len(block) >= MAX_BLOCK_LINES:
            self._block = None
            return False
        block.append(body)
        if not closing:
            return True
        self._block = None
        return self._on_text(" ".join(block), line, out, block=True)

    def _on_text(self, text: str, line: Line, out: Emitter, *, block: bool = False) -> bool:
        if text.startswith(_WRAP_INDENT) and self._wrap is not None and line.no == self._wrap.line + 1:
            wrapped = self._wrapped(text, line, out)
            if wrapped is not None:
                return wrapped
        reading = read_fields(text)
        if self._header is not None:
            if reading is not None and self._header.takes(text, reading, line.no):
                return True
            self._close_header(out)
        if reading is None:
            return False
        if not reading.metrics:
            if reading.epoch is not None and reading.step is None and _EPOCH_HEADER.search(text[prefix_end(text) :]):
                # `Epoch 0/139`, `Epoch:  7`: a header the lines after it belong to; its figures may
                # follow one a line (`Training epoch: 1`, then `\tMean training loss: 2.4648.`)
                self._epoch_context = reading
                if reading.inner is None:
                    self._header = _Header(
                        reading, line.no, line_time(text), evaluation=bool(EVAL_WORD.search(text)), one_a_line=True
                    )
                return True
            elif reading.step is not None or (reading.inner is not None and _BANNER.search(text)):
                # `--> TIME: ... -- STEP: 0/3984 -- GLOBAL_STEP: 0`: its metrics follow, one per line; a
                # batch counter in a banner, VoteNet's ` ---- batch: 040 ----` (not `batch = 405`, a size)
                self._header = _Header(reading, line.no, line_time(text))
            return False
        return self._counted(reading, line.no, line_time(text), out, block=block, text=text)

    def _close_header(self, out: Emitter) -> None:
        header, self._header = self._header, None
        if header is not None and header.metrics:
            settle_sole_loss(header.metrics)  # (the block's figures are one report, counted by its header)
            reading = replace(header.reading, metrics=header.metrics, shape="header " + header.reading.shape)
            self._counted(reading, header.line, header.time, out, block=False, text="")

    def finish(self, out: Emitter) -> None:
        self._close_header(out)
        self._unconfirmed_non_finite(out)

    def held_step(self) -> int | None:
        """The step of the report a lone report at the end would be (`after_finish`), while it waits."""
        if self._last_step is not None:
            return None
        steps = [h.step for h in self._lone_candidates()]
        return max(steps) if steps else None

    def _lone_candidates(self) -> list[_Held]:
        """The held reports that may be a run's one step report: a named step with a loss, of a shape never
        confirmed as progress."""
        return [
            h
            for shape, template in self._templates.items()
            if not template.confirmed and not shape.startswith("header ")
            for h in template.held
            if h.named and "loss" in h.metrics
        ]

    def after_finish(self, out: Emitter) -> None:
        """A run that printed one step report, and no other step the source read from any format
        (Lingvo's `step:   905 ... loss:4.96068` before minutes of `Steps/second: 0.014225`): at the end
        of the input that report is its step. With any step read it is not: a one-off line after
        steps is a summary (`Best model at step 3000, loss 1.2`), not a step going back."""
        if out.last_step() is not None:
            return
        lone = self._lone_candidates()
        # (the same line, at the same stamped time, from every node: torchtitan under `srun -l` prints rank 0's
        # once per node; without a stamp, a line repeated is a counter that does not move)
        same = len({(h.step, h.time, tuple(sorted(h.metrics.items()))) for h in lone}) == 1
        if len(lone) == 1 or (same and lone[0].time is not None):
            _release(out, lone[:1])

    def _unconfirmed_non_finite(self, out: Emitter) -> None:
        """A line never confirmed as progress is not a step, but a NaN or inf loss it printed is
        still what the log said (DeepSpeech's one `Training of Epoch 0 - loss: inf`): one `nan`
        event per such line, at the end of the input."""
        for shape, template in self._templates.items():
            if template.confirmed or shape.startswith("header "):
                continue
            # (lines without a counter are not: `  eval_loss = nan` is the numerics module's to report)
            for metrics, line_no, step in [(h.metrics, h.line, h.step) for h in template.held]:
                bad = [n for n in _NAN_WATCHED if n in metrics and not math.isfinite(metrics[n])]
                if bad:
                    what = ", ".join(f"{n} is {metrics[n]}" for n in bad)
                    out.event("nan", "error", what, {"metric": bad[0]}, step=step, line=line_no)

    def _counted(
        self, reading: Reading, line_no: int, time: str | None, out: Emitter, *, block: bool, text: str
    ) -> bool:
        """A reading with metrics: a step (confirmed, or held until its shape repeats), or not progress."""
        context = self._epoch_context
        if reading.epoch is None and context is not None and context.epoch is not None:
            # the epoch a header announced; a line with no counter of its own is that epoch's (and
            # that batch's) report
            metrics = {**reading.metrics, "epoch": context.epoch}
            if reading.step is not None or reading.inner is not None:
                reading = replace(reading, metrics=metrics)
            else:
                reading = replace(
                    reading,
                    metrics=metrics,
                    epoch=context.epoch,
                    inner=context.inner,
                    inner_total=context.inner_total,
                    epoch_total=context.epoch_total,
                    shape=reading.shape + " @ " + context.shape,
                )
        key = reading.shape
        template = self._templates.get(key)
        if template is None:
            template = _Template()
            self._templates[key] = template
            if len(self._templates) > MAX_TEMPLATES:
                self._templates.popitem(last=False)
        else:
            self._templates.move_to_end(key)
        if template.elapsed is None and not reading.clock_ok:
            template.elapsed = False  # (its step time's label says per step, `time/step`: never a clock)
        epoch_only = reading.step is None and reading.inner is None
        if epoch_only and self._batch_counted:
            # `Epoch[0] Time cost=28.650` between `Epoch[0] Batch [900] ...` lines: a summary of the
            # epoch, not a step numbered by the epoch (that is for logs printing one line per epoch);
            # an epoch's validation (`{"epoch": 25, "valid_loss": ...}`) belongs to the last step
            if "eval_loss" not in reading.metrics or self._last_step is None:
                return False
            metrics = dict(reading.metrics)
            if reading.epoch is not None:
                metrics.setdefault("epoch", reading.epoch)
            out.step(self._last_step, metrics)
            return True
        if reading.step is not None and reading.epoch is not None and reading.epoch.is_integer():
            reading = self._per_epoch(reading, template)
        got = _step_of(reading, template)
        if got is None:
            return self._uncounted(reading, template, line_no, time, text, out)
        step, metrics = got
        if not epoch_only:
            self._batch_counted = True
        if (
            not template.confirmed
            and (reading.step is not None or (epoch_only and not self._batch_counted))
            and self._last_step is not None
            and step >= self._last_step
            and _evaluation_only(metrics)
        ):
            # `  [eval] step   48000 | val_loss 4.0749` every few thousand steps: an evaluation of the
            # progress the source confirmed, at its step (its shape need not repeat first); MXNet's
            # `Epoch[4] Validation-Loss=87.49` of progress counted by the epoch
            self._emit(out, step, metrics, time, line_no)
            return True
        # (a dict block naming its step is a report, not a config dump; the lines held until now go
        # first: `iter 1: acc 0.50`)
        if template.confirmed or (
            self._goes_on(step, reading) or (block and reading.step is not None) or _counted_report(reading)
        ):
            return self._confirmed(out, template, template.held, step, metrics, time, line_no)
        held = template.held
        if held and step > held[-1].step:
            earlier = sorted(held + self._held_within(template, held[-1], step), key=lambda h: h.line)
            return self._confirmed(out, template, earlier, step, metrics, time, line_no)
        if held and step < held[-1].step:
            held.clear()  # the same step again (other ranks) is held with it
        named = reading.step is not None and not reading.evaluating and not _MENTION.search(text)
        held.append(_Held(step, metrics, line_no, time, named))
        del held[:-MAX_HELD]
        if (
            reading.step is None
            and reading.inner is None
            and len(held) > UNCOUNTED_REPEATS
            and "loss" in metrics
            and all(h.step == step for h in held)
            and (reading.epoch_total is not None or all(not _PACE.isdisjoint(h.metrics) for h in held))
            and len({h.metrics.get("loss") for h in held}) == len(held)
        ):
            # DeepDanbooru's `Epoch[1] Loss=0.0098, ..., Speed = 7.2 samples/s, 99.88 %`, again and again
            # within one epoch: progress whose only counter is the epoch (its loss moves; a pace on every
            # line or the epoch against its total, `Epoch [1/5], Batch Loss: 10.75`; not a fold's or a
            # seed's summary, `Fold 3 done | epoch 30 | loss 0.41`)
            return self._confirmed(out, template, held[:-1], step, metrics, time, line_no)
        self._wrap = _Wrap(line_no, step, held[-1])
        return False

    def _confirmed(
        self,
        out: Emitter,
        template: _Template,
        earlier: list[_Held],
        step: int,
        metrics: dict[str, float],
        time: str | None,
        line_no: int,
    ) -> bool:
        """The shape is progress: the lines held before this one go out first, then this one's step."""
        if template.elapsed is not False:
            for h in earlier:
                _clock_time(template, h.metrics, h.step)
            _clock_time(template, metrics, step)
        if earlier:
            _release(out, earlier)
        template.held = []
        template.confirmed = True
        self._emit(out, step, metrics, time, line_no)
        self._wrap = _Wrap(line_no, step, None, reported=metrics)
        return True

    def _held_within(self, template: _Template, last: _Held, step: int) -> list[_Held]:
        """The lines other shapes hold that lie inside the progress `template` now confirms: after
        its last held line, with a step after its step and before `step` (DeiT's log.txt: epoch 249,
        then 250 with its test figures added, then 251). Had the progress been confirmed when they
        came, they would have gone on from it; they go out with it, in line order, and their shapes
        are confirmed. An evaluation of the held step itself is inside too (Ignite's `Validation
        Results - Epoch[1]` after its `Training Results - Epoch[1]`)."""
        found: list[_Held] = []
        for other in self._templates.values():
            if other is template or other.confirmed or not other.held:
                continue
            inside = [
                h
                for h in other.held
                if h.line > last.line
                and (last.step < h.step < step or (h.step == last.step and _evaluation(h.metrics)))
            ]
            if inside:
                found += inside
                other.held = [h for h in other.held if h not in inside]
                other.confirmed = True
        return found

    def _wrapped(self, text: str, line: Line, out: Emitter) -> bool | None:
        """A progress line's metrics wrapped onto indented lines under it (Lightning's Rich bar:
        `Epoch 20/23 ━━━ 98/98 ... train_loss: 0.284`, then `      train_acc: 0.905 lr: 0.009`), a
        name at the end of one and its value on the next (`... val_loss:` / `      0.308 ...`).
        None: the line is not such a continuation (it has a counter of its own: a line of its own)."""
        wrap = self._wrap
        assert wrap is not None
        body = wrap.tail + text.strip()
        dangling = _DANGLING_NAME.search(body)
        tail, body = (body[dangling.start() :] + " ", body[: dangling.start()]) if dangling else ("", body)
        reading = read_fields(body) if body else None
        if reading is not None and (reading.step is not None or reading.inner is not None or reading.epoch is not None):
            self._wrap = None
            return None
        wrap.tail, wrap.line = tail, line.no
        if reading is None or not reading.metrics:
            return dangling is not None
        if wrap.held is not None:
            for name, value in reading.metrics.items():
                wrap.held.metrics.setdefault(name, value)
        else:
            out.step(wrap.step, dict(reading.metrics))
        return True

    def _uncounted(
        self, reading: Reading, template: _Template, line_no: int, time: str | None, text: str, out: Emitter
    ) -> bool:
        """`training loss: 1.30` printed again and again with no counter (x-transformers, minimal loops):
        progress once the shape repeats (a loss tensor printed with its `grad_fn` at once), step
        unknown, while this source has no counted progress."""
        counted = reading.step is not None or reading.inner is not None or reading.epoch is not None
        if not counted and "eval_loss" in reading.metrics and "loss" not in reading.metrics:
            # `VALID SET 0 LOSS:0.1780 CER:5.78%` after `(Epoch 20) TRAIN LOSS:0.1903 ...`: an
            # evaluation printed with no counter (no training loss beside it) reports on the last step
            # (its evaluation figures only), or joins that step's line while its shape is held
            evals = {k: v for k, v in reading.metrics.items() if k.startswith("eval_")}
            wrap = self._wrap
            if wrap is not None and wrap.held is not None:
                for name, value in evals.items():
                    wrap.held.metrics.setdefault(name, value)
                return True
            if self._last_step is not None:
                out.step(self._last_step, evals)
                return True
        if not counted and self._continues(reading, line_no, out):
            return True
        if counted or self._last_step is not None or not ({"loss", "eval_loss"} & reading.metrics.keys()):
            return False
        template.uncounted_seen += 1
        metrics = dict(reading.metrics)
        # `loss tensor(0.69, device='cuda:0', grad_fn=<MeanBackward0>)`: a loss still in the autograd
        # graph, printed by the training loop itself: progress from its first print.
        if self._uncounted_progress or template.uncounted_seen > UNCOUNTED_REPEATS or "grad_fn=<" in text:
            out.step(None, metrics)
            return True
        template.uncounted.append((metrics, line_no, time))
        if template.uncounted_seen < UNCOUNTED_REPEATS:
            return False
        for held, no, time in template.uncounted:
            out.step(None, held, time=time, line=no)
        template.uncounted = []
        self._uncounted_progress = True  # other loss lines of this source (validation) go with it
        return True

    def _per_epoch(self, reading: Reading, template: _Template) -> Reading:
        """PyTorch's minGPT-DDP tutorial prints `Epoch 3 | Iter 0 | Train Loss 2.21` once an epoch: a step
        counter with the same value in each epoch counts nothing, the epoch does (its held lines too)."""
        held = template.held
        if not template.per_epoch and not template.confirmed and held and held[-1].step == reading.step:
            epoch = held[-1].metrics.get("epoch")
            now = reading.epoch
            if epoch is not None and now is not None and epoch < now and all(h.step == reading.step for h in held):
                template.per_epoch = True
                for h in held:
                    h.step = int(h.metrics.get("epoch", epoch))
        if not template.per_epoch:
            return reading
        return replace(reading, step=int(reading.epoch or 0), total=None)

    def _continues(self, reading: Reading, line_no: int, out: Emitter) -> bool:
        """A line of figures with no counter, right under a step's line, that names none of its figures
        again: the rest of that step's report (DGB's `epoch: 22 took 45.00s`, then `Epoch mean loss: 0.297`,
        then `val auc: 0.97`; DGL-KE's `1000 steps take 8.8 seconds` after its step's lines)."""
        wrap = self._wrap
        if wrap is None or line_no != wrap.line + 1 or wrap.tail:
            return False
        names = reading.metrics.keys()
        # (`start 23 epoch`, Jupyter's `CPU times: user 2min`, `best_acc: 0.91`: no figure of a report)
        if not all(n in CONTRACT_METRICS or _FIGURE.search(n) for n in names) or all(map(_BEST.match, names)):
            return False
        # (not a line still held: `Resuming from epoch 5, best_acc: 0.31` then `loss: 0.50, val_loss: 0.30`)
        reported = wrap.reported
        if wrap.held is not None or wrap.step != self._last_step or not reported or not names.isdisjoint(reported):
            return False
        out.step(wrap.step, dict(reading.metrics))
        self._wrap = replace(wrap, line=line_no, reported={**reported, **reading.metrics})
        return True

    def _goes_on(self, step: int, reading: Reading) -> bool:
        """A new shape continues confirmed progress: a step or batch counter just past the last one."""
        last = self._last_step
        # one line per epoch (DeiT's log.txt adds its test metrics to some): the epoch counts too
        by_epoch = reading.epoch is not None and not self._batch_counted
        counted = reading.step is not None or reading.inner is not None or by_epoch
        return counted and last is not None and last < step <= last + 10_000

    def _emit(
        self, out: Emitter, step: int, metrics: dict[str, float], time: str | None = None, line: int | None = None
    ) -> None:
        self._last_step = step if self._last_step is None else max(self._last_step, step)
        out.step(step, metrics, time=time, line=line)

    def _on_bar(self, bar: Bar, out: Emitter) -> bool:
        """tqdm bars are progress by construction: a step each time the counter moves on."""
        if _EPOCH_BAR.fullmatch(bar.desc):
            self._epochs = bar.total or None
        if bar.total == 1 and not bar.postfix:
            return False  # `100%|█| 1/1 [00:00<00:00, 19.27it/s]`: one piece of setup work, not training steps
        reading = _bar_reading(bar)
        if reading is None:
            return False
        template = self._templates.setdefault(reading.shape, _Template(confirmed=True))
        got = _step_of(reading, template)
        if got is None:
            return False
        step, metrics = got
        if self._epochs is not None and reading.epoch is not None and reading.inner_total is not None:
            metrics.setdefault("total_steps", float(self._epochs * reading.inner_total))
        if self._last_bar_step is not None and step == self._last_bar_step:
            return True  # the same step redrawn
        self._last_bar_step = step
        out.step(step, metrics)
        if reading.step is not None and bar.n == bar.total and _TRAINING_BAR.fullmatch(bar.desc):
            if not self._bar_finished:
                self._bar_finished = True
                out.event("finished", "info", f"{bar.desc}: {bar.n}/{bar.total}", {"total_steps": bar.total}, step=step)
        return True
