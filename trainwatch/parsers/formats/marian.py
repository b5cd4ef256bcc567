"""Marian NMT (`marian`, `marian-dev`), as its training graph group prints every `--disp-freq` updates:

    [2021-07-17 12:54:33] Ep. 1 : Up. 14000 : Sen. 965,843 : Cost 5.20174599 : Time 359.59s : 3007.81 words/s
    [2023-03-02 10:11:12] Ep. 1 : Up. 500 : Sen. 64,000 : Cost 7.12 * 1,234,567 @ 2,345 after 9,876,543 : Time 98.21s : 12571.47 words/s : gNorm 1.2345 : L.r. 3.0000e-04
    [2021-07-17 13:50:36] [valid] Ep. 1 : Up. 20000 : cross-entropy : 130.97 : new best
    [2021-07-17 13:49:15] Saving model weights and runtime parameters to model/model.iter20000.npz

`Up.` is the update (the step), `Sen.` the sentences seen, `Cost` the training cost (the loss),
`words/s` target words per second (tokens/s), `L.r.` the learning rate. `Time` is the time since the
previous display, so the step time is that time over the updates between the two lines (unknown on
the first). A `[valid]` line is one validation metric at that update: `cross-entropy` /
`ce-mean-words` is the evaluation loss, the others are kept as `eval_<metric>`. A save of the model
weights is a checkpoint (once per update: Marian writes several files for one save).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf)"
_TRAIN = re.compile(
    rf"\bEp\. (?P<ep>\d{{1,9}}) : Up\. (?P<up>\d{{1,18}}) : Sen\. (?P<sen>[\d,]{{1,30}}) : Cost (?P<cost>{_NUM})"
    rf"(?P<rest>.*)$"
)
_TIME = re.compile(rf": Time (?P<t>{_NUM})s\b")
_WORDS = re.compile(rf": (?P<w>{_NUM}) words/s\b")
_LR = re.compile(rf": L\.r\. (?P<lr>{_NUM})")
_GNORM = re.compile(rf": gNorm (?P<g>{_NUM})")
_VALID = re.compile(
    rf"\[valid\] Ep\. (?P<ep>\d{{1,9}}) : Up\. (?P<up>\d{{1,18}}) : (?P<metric>[\w-]{{1,40}}) : (?P<value>{_NUM})\b"
)
_SAVE = re.compile(r"\bSaving model weights and runtime parameters to (?P<path>\S+)")
_EVAL_LOSS = frozenset({"cross-entropy", "ce-mean-words", "ce-sum", "ce-mean"})


class MarianParser(Parser):
    name = "marian"
    title = "Marian NMT"
    triggers = ("Up. ", "Saving model weights")
    example = (
        "[2021-07-17 12:54:33] Ep. 1 : Up. 14000 : Sen. 965,843 : Cost 5.20174599 : Time 359.59s : 3007.81 words/s"
    )
    priority = 90
    samples = (
        Sample(  # marian-nmt/marian issue #376
            "[2021-07-17 12:54:33] Ep. 1 : Up. 14000 : Sen. 965,843 : Cost 5.20174599 : Time 359.59s : 3007.81 words/s\n"
            "[2021-07-17 13:13:46] Ep. 1 : Up. 16000 : Sen. 1,052,108 : Cost 6.59608603 : Time 1153.11s : 1942.28 words/s\n"
            "[2021-07-17 13:49:15] Saving model weights and runtime parameters to model/model.iter20000.npz\n"
            "[2021-07-17 13:49:25] Saving model weights and runtime parameters to model/model.npz\n"
            "[2021-07-17 13:50:36] [valid] Ep. 1 : Up. 20000 : cross-entropy : 130.97 : new best\n"
            "[2021-07-17 13:51:02] [valid] Ep. 1 : Up. 20000 : perplexity : 187.458 : new best\n",
            steps=(
                (14000, {"epoch": 1, "loss": 5.20174599, "tokens_per_s": 3007.81, "sentences": 965843}),
                (16000, {"loss": 6.59608603, "step_time_s": 1153.11 / 2000}),
                (20000, {"eval_loss": 130.97, "eval_perplexity": 187.458}),
            ),
            events=("checkpoint",),
        ),
        Sample(  # a newer marian-dev display line: cost with its labels, gradient norm and learning rate
            "[2023-03-02 10:11:12] Ep. 1 : Up. 500 : Sen. 64,000 : Cost 7.12 * 1,234,567 @ 2,345 after 9,876,543 : "
            "Time 98.21s : 12571.47 words/s : gNorm 1.2345 : L.r. 3.0000e-04\n",
            steps=((500, {"loss": 7.12, "tokens_per_s": 12571.47, "grad_norm": 1.2345, "lr": 3e-04}),),
        ),
    )

    def __init__(self) -> None:
        self._last_up: int | None = None
        self._saved_at: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if "Up. " in text:
            valid = _VALID.search(text) if "[valid]" in text else None
            if valid is not None:
                value = parse_number(valid.group("value"))
                if value is None:
                    return False
                metric = valid.group("metric")
                name = "eval_loss" if metric in _EVAL_LOSS else "eval_" + snake(metric)
                out.step(int(valid.group("up")), {name: value, "epoch": float(valid.group("ep"))})
                return True
            train = _TRAIN.search(text)
            return train is not None and self._train(train, out)
        save = _SAVE.search(text)
        if save is None:
            return False
        if self._saved_at is None or self._saved_at != self._last_up:
            self._saved_at = self._last_up
            out.event(
                "checkpoint", "info", text[save.start() :].strip(), {"path": save.group("path")}, step=self._last_up
            )
        return True

    def _train(self, m: re.Match[str], out: Emitter) -> bool:
        up, cost, sen = int(m.group("up")), parse_number(m.group("cost")), parse_number(m.group("sen"))
        if cost is None:
            return False
        metrics = {"epoch": float(m.group("ep")), "loss": cost}
        if sen is not None:
            metrics["sentences"] = sen
        rest = m.group("rest")
        for pattern, group, name in ((_WORDS, "w", "tokens_per_s"), (_LR, "lr", "lr"), (_GNORM, "g", "grad_norm")):
            found = pattern.search(rest)
            value = parse_number(found.group(group)) if found is not None else None
            if value is not None:
                metrics[name] = value
        took = _TIME.search(rest)
        seconds = parse_number(took.group("t")) if took is not None else None
        if seconds is not None and self._last_up is not None and up > self._last_up:
            metrics["step_time_s"] = seconds / (up - self._last_up)
        self._last_up = up
        out.step(up, metrics)
        return True
