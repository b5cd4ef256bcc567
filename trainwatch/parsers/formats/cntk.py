"""Microsoft CNTK (1.x and BrainScript, 2.x's Python progress printer): minibatch blocks and epoch summaries.

     Epoch[17 of 30]-Minibatch[   1- 500, 64.02%]: SamplesSeen = 32000; TrainLossPerSample =  0.61816498; ...
     Epoch[ 1 of 300]-Minibatch[   1-  10]: ce = 5.87155566 * 2560; errs = 99.6% * 2560; time = 14.1504s; ...
     Minibatch[   1- 100]: loss = 2.302585 * 6400, metric = 88.64% * 6400;
    Finished Epoch[16 of 30]: [Training Set] TrainLossPerSample = 0.62585586; ...; AvgLearningRatePerSample = 4.6875e-005
    Finished Epoch[1 of 10]: [Training] loss = 0.41 * 60000, metric = 11.75% * 60000 5.212s (11512.1 samples/s);
    Finished Epoch[ 1 of 300]: [Validate] ce = 1.1 * 10000; errs = 38.6% * 10000
    EXCEPTION occurred: The training criterion is not a number (NAN). Stop

CNTK counts minibatches within an epoch and prints no global step, so the records carry the epoch
and no step number. The criterion (`TrainLossPerSample`, or the first `name = value * samples`
pair: `ce`, `loss`, `CrossEntropyWithSoftmax`) is the loss, an evaluation set's (`[Validate]`)
the eval loss; the per-sample learning rate is `lr`; a block's `time` over its minibatches is the
step time. MSVC prints NaN and infinity as `1.#QNAN000`, `-1.#IND00`, `1.#INF00`.
"""

from __future__ import annotations

import math
import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = r"[-+]?(?:\d*\.#(?:QNAN|SNAN|IND|INF)\d*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)"
_HEAD = re.compile(
    r"^\s*(?:Finished Epoch\s*\[\s*(?P<fe>\d{1,9})\s+of\s+\d{1,9}\s*\]\s*:\s*\[(?P<set>[^\]]{1,40})\]"
    r"|(?P<final>Final Results\s*:\s*|Finished Evaluation\s*\[\s*\d{1,9}\s*\]\s*:\s*)?"
    r"(?:Epoch\s*\[\s*(?P<e>\d{1,9})\s+of\s+\d{1,9}\s*\]\s*-\s*)?"
    r"Minibatch\s*\[\s*(?P<a>\d{1,12})\s*-\s*(?P<b>\d{1,12})(?:\s*,\s*[\d.]+%)?\s*\]\s*:)(?P<body>.*)$"
)
# (each starts where a name or a number starts: tried from inside a long run of letters or digits,
# they took seconds on a 20,000-character line)
_PAIR = re.compile(rf"(?<![\w\]])(?P<name>[A-Za-z][\w\[\]]*)\s*=\s*(?P<value>{_NUM})(?P<pct>%)?(?P<count>\s*\*\s*\d+)?")
_TIMED = re.compile(rf"(?<![\d.#])(?P<secs>{_NUM})s\s*\(\s*(?P<rate>{_NUM})\s*samples/s\)")
# The settings an epoch starts with and the reader's position: understood, not kept (`_starting`).
_STARTING = re.compile(
    rf"^\s*Starting Epoch (?P<e>\d{{1,9}}): learning rate per sample = (?P<lr>{_NUM})"
    rf"(?:\s+effective momentum = (?P<m>{_NUM}))?"
)
_READER = re.compile(r"^\s*starting epoch \d{1,9} at record count \d+")
_EXCEPTION = re.compile(r"^\s*EXCEPTION occurred:\s*(?P<message>\S.*)$")
_LOSS_NAMES = frozenset({"trainlosspersample", "crossentropywithsoftmax", "crossentropy", "ce", "loss"})
_NAMES = {
    "avglearningratepersample": "lr",
    "learningratepersample": "lr",
    "samplespersecond": "samples_per_s",
    "epochtime": "epoch_time_s",
}


def _number(raw: str) -> float | None:
    """A CNTK number, MSVC's `1.#QNAN000` and `1.#INF00` included."""
    if "#" in raw:
        if "INF" in raw:
            return -math.inf if raw.startswith("-") else math.inf
        return math.nan
    return parse_number(raw)


class CNTKParser(Parser):
    name = "cntk"
    title = "Microsoft CNTK"
    triggers = ("Minibatch[", "Finished Epoch[", "EXCEPTION occurred:", "tarting epoch ", "tarting Epoch ")
    example = " Epoch[ 1 of 300]-Minibatch[   1-  10]: ce = 5.87155566 * 2560; errs = 99.6% * 2560; time = 14.1504s"
    priority = 400  # (after the frameworks whose hot lines are tested first: its triggers cost every line before them)
    samples = (
        Sample(  # microsoft/CNTK issue 194 (CNTK 1.x CIFAR-10): a minibatch block, then the epoch's summary
            " Epoch[17 of 30]-Minibatch[   1- 500, 64.02%]: SamplesSeen = 32000; TrainLossPerSample =  0.61816498; "
            "EvalErr[0]PerSample = 0.20075000; TotalTime = 60.3761s; SamplesPerSecond = 530.0\n"
            "Finished Epoch[17 of 30]: [Training Set] TrainLossPerSample = 0.61884153; EvalErrPerSample = 0.20176457; "
            "AvgLearningRatePerSample = 4.6875e-005; EpochTime=94.3146\n",
            steps=(
                (None, {"epoch": 17, "loss": 0.61816498, "samples_per_s": 530.0, "step_time_s": 60.3761 / 500}),
                (None, {"epoch": 17, "loss": 0.61884153, "lr": 4.6875e-05, "epoch_time_s": 94.3146}),
            ),
        ),
        Sample(  # microsoft/CNTK issue 406 (BrainScript): MSVC's NaN, then the run stops
            " Epoch[ 1 of 1]-Minibatch[ 501-1000]: SamplesSeen = 500; TrainLossPerSample =  1.#QNAN000; "
            "EvalErr[0]PerSample = 0.48000000; TotalTime = 2.3504s; SamplesPerSecond = 212.7\n"
            "EXCEPTION occurred: The training criterion is not a number (NAN). Stop\n",
            steps=((None, {"epoch": 1, "loss": math.nan, "samples_per_s": 212.7}),),
            events=("nan", "crash"),
        ),
        Sample(  # CNTK 2.x tutorials (cntk.logging.ProgressPrinter): criterion and metric with their sample counts
            "Finished Epoch[1 of 10]: [Training] loss = 0.413278 * 60000, metric = 11.75% * 60000 5.212s "
            "(11512.1 samples/s);\n"
            "Finished Epoch[ 1 of 300]: [Validate] ce = 1.1 * 10000; errs = 38.6% * 10000\n",
            steps=(
                (None, {"epoch": 1, "loss": 0.413278, "metric_pct": 11.75, "samples_per_s": 11512.1}),
                (None, {"epoch": 1, "eval_loss": 1.1, "eval_errs_pct": 38.6}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "EXCEPTION occurred:" in text:
            crash = _EXCEPTION.match(text)
            if crash is None:
                return False
            out.event("crash", "error", crash.group("message").rstrip(), {"source": "cntk"})
            return True
        m = _HEAD.match(text)
        if m is None:
            return self._starting(text)
        evaluating = (m.group("set") is not None and "train" not in m.group("set").lower()) or bool(m.group("final"))
        epoch = m.group("fe") or m.group("e")
        metrics: dict[str, float] = {} if epoch is None else {"epoch": float(int(epoch))}
        pairs = list(_PAIR.finditer(m.group("body")))
        # the criterion: a loss by its name, else the first figure counted over samples (`x * 6400`)
        # that is not a percentage (`errs = 1.08% * 6400`, `metric = 12.5%` are error rates)
        named = [p for p in pairs if p.group("name").replace("[0]", "").lower() in _LOSS_NAMES]
        first = named[0] if named else next((p for p in pairs if p.group("count") and not p.group("pct")), None)
        criterion = False
        block_s: float | None = None
        for pair in pairs:
            value = _number(pair.group("value"))
            if value is None:
                continue
            key = pair.group("name").replace("[0]", "")
            low = key.lower()
            if pair is first:
                name = "eval_loss" if evaluating else "loss"
                criterion = True
            elif low in _NAMES:
                name = _NAMES[low]
            elif low in ("time", "totaltime"):
                block_s = value
                continue
            else:
                name = snake(key) + ("_pct" if pair.group("pct") else "")
                if evaluating:
                    name = "eval_" + name
            metrics.setdefault(name, value)
        timed = _TIMED.search(m.group("body"))
        if timed is not None:
            rate = _number(timed.group("rate"))
            if rate is not None:
                metrics.setdefault("samples_per_s", rate)
        if block_s is not None and m.group("a") is not None:
            minibatches = int(m.group("b")) - int(m.group("a")) + 1
            if minibatches > 0:
                metrics["step_time_s"] = round(block_s / minibatches, 12)
        if not criterion and len(metrics) <= (0 if evaluating else 1):
            return False
        out.step(None, metrics)
        return True

    def _starting(self, text: str) -> bool:
        """`Starting Epoch 17: learning rate per sample = 0.000047  effective momentum = 0.900000 ...` and
        `starting epoch 16 at record count ...`: understood, not kept. The learning rate is printed
        rounded there (0.000047 for 4.6875e-05) and exactly in the epoch's summary: both would draw a
        sawtooth on the lr chart. Read as progress they were steps 17, 18, then 16, 17."""
        return _READER.match(text) is not None or _STARTING.match(text) is not None
