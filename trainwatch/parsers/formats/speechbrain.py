"""SpeechBrain's train logger: one summary line per epoch (`FileTrainLogger.log_stats`):

    epoch: 33, lr: 5.03e-05, wave2vec_lr: 4.30e-06 - train loss: 7.22e-01 - valid loss: 7.56e-01, valid CER: 9.66
    2023-06-09 22:28:28,650 - speechbrain.utils.train_logger - INFO - epoch: 33, lr: 5.03e-05 - train loss: 7.22e-01 - ...

`log_stats` joins the meta stats (`epoch`, learning rates) and then the stats of each of `train`,
`valid` and `test` with ` - `, every stat `key: value` (`{dataset} {key}` for a dataset), the same
line in `train_log.txt` and, behind the logger's prefix, in the run's log. The line is recognised by
that shape, so a run's first epoch is a step too (the generic layer waits for a shape to repeat).
The step is the epoch as printed; `valid loss` is `eval_loss`, the first learning rate is `lr`.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import named_value

_LOGGER = "train_logger - "
_STAT = re.compile(r"(?P<key>[A-Za-z][\w ]{0,40}?): (?P<value>[-+]?(?:\d[\d.]*(?:[eE][-+]?\d+)?|nan|inf))$")
_DATASETS = ("train ", "valid ", "test ")
_EPOCH_KEYS = ("epoch", "Epoch")


def _stats(part: str) -> list[tuple[str, float]] | None:
    """`key: value, key: value` -> pairs, or None if any item is not a stat."""
    pairs: list[tuple[str, float]] = []
    for item in part.split(", "):
        m = _STAT.match(item.strip())
        value = parse_number(m.group("value")) if m is not None else None
        if m is None or value is None:
            return None
        pairs.append((m.group("key"), value))
    return pairs


class SpeechBrainParser(Parser):
    name = "speechbrain"
    title = "SpeechBrain train logger"
    triggers = (" - train ", " - valid ", " - test ")
    example = "epoch: 1, lr: 1.00e+00 - train loss: 9.45e-01 - valid loss: 1.23, valid CER: 35.42, valid WER: 39.14"
    priority = 100
    samples = (
        Sample(  # speechbrain/speechbrain issue #2031: one epoch line in the run's log
            "2023-06-09 22:28:28,650 - speechbrain.utils.train_logger - INFO - epoch: 33, lr: 5.03e-05, "
            "wave2vec_lr: 4.30e-06 - train loss: 7.22e-01 - valid loss: 7.56e-01, valid CER: 9.66, valid WER: 12.76\n",
            steps=((33, {"epoch": 33, "lr": 5.03e-05, "loss": 0.722, "eval_loss": 0.756, "valid_wer": 12.76}),),
        ),
        Sample(  # speechbrain/speechbrain issue #2584: the speaker-id recipe's train_log.txt
            "Epoch: 1, lr: 1.00e-03 - train loss: 8.84e-01 - valid loss: 1.76e-01, valid error: 5.25e-02\n",
            steps=((1, {"epoch": 1, "lr": 0.001, "loss": 0.884, "eval_loss": 0.176, "valid_error": 0.0525}),),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        at = text.find(_LOGGER)
        body = text[at + len(_LOGGER) :] if at >= 0 else text
        if body.startswith("INFO - "):
            body = body[len("INFO - ") :]
        meta, *parts = body.rstrip().split(" - ")
        if not parts or not all(p.startswith(_DATASETS) for p in parts):
            return False
        stats = [_stats(p) for p in (meta, *parts)]
        if any(s is None for s in stats):
            return False
        step: int | None = None
        metrics: dict[str, float] = {}
        for pairs in stats:
            for key, value in pairs or ():
                if key in _EPOCH_KEYS and value.is_integer() and value >= 0:
                    step = int(value)
                    metrics["epoch"] = value
                    continue
                named = named_value(key, value)
                if named is not None:
                    metrics.setdefault(*named)
        if not metrics:
            return False
        out.step(step, metrics)
        return True
