"""icefall / k2 (and recipes built on its loop: ZipVoice): one line per logged batch, per rank.

    ... INFO [train.py:907] (0/8) Epoch 3, batch 115350, loss[loss=0.2266, simple_loss=0.245, ...,
        over 493.00 frames. ], tot_loss[loss=0.2179, ...], batch size: 9, lr: 3.41e-04, grad_scale: 8.0
    ... INFO [train_zipvoice.py:731] Epoch 1, batch 49, global_batch_idx: 50, batch size: 25, loss[...]
    ... INFO [finetune.py:1166] Validation on yodas: Epoch 1, validation: loss=7.573, simple_loss=6.882, ...

`(r/w)` before `Epoch` is the rank and the world size; every rank prints the same batch. `loss[...]`
is the batch's loss, `tot_loss[...]` the running (frame-weighted) average, kept as `tot_loss`.
`batch` counts within the epoch; `global_batch_idx`, where printed, is the step. `grad_scale` is the
fp16 loss scale. The validation line's losses are evaluation figures (`eval_loss`, `eval_*`).
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import Reading, read_group

_TRAIN = re.compile(r"(?:\((?P<rank>\d{1,6})/\d{1,6}\)\s+)?Epoch (?P<epoch>\d+), (?P<rest>batch \d+,.*)$")
_TOT = re.compile(r"tot_loss\[loss=([-+\d.eE]+|nan|inf)")
_VALID = re.compile(r"(?:\((?P<rank>\d{1,6})/\d{1,6}\)\s+)?.*?Epoch (?P<epoch>\d+), validation: (?P<rest>.*)$")


class IcefallParser(Parser):
    name = "icefall"
    title = "icefall / k2 recipes"
    triggers = ("Epoch ",)
    example = "(0/8) Epoch 3, batch 115350, loss[loss=0.2266, over 493.00 frames. ], lr: 3.41e-04"
    priority = 100
    samples = (
        Sample(  # k2-fsa/icefall issue #569: two ranks of one batch
            "2022-10-23 14:53:29,352 INFO [train.py:907] (0/8) Epoch 3, batch 115350, loss[loss=0.2266, "
            "simple_loss=0.245, pruned_loss=0.1042, over 493.00 frames. utt_duration=220.1 frames, "
            "utt_pad_proportion=0.3638, over 9.00 utterances.], tot_loss[loss=0.2179, simple_loss=0.2714, "
            "pruned_loss=0.08219, over 177822.05 frames. ], batch size: 9, lr: 3.41e-04, grad_scale: 8.0\n"
            "2022-10-23 14:53:29,354 INFO [train.py:907] (6/8) Epoch 3, batch 115350, loss[loss=0.2765, "
            "simple_loss=0.2746, pruned_loss=0.1391, over 662.00 frames. ], tot_loss[loss=0.2232, "
            "over 189134.61 frames. ], batch size: 9, lr: 3.41e-04, grad_scale: 8.0\n",
            steps=(
                (115350, {"loss": 0.2266, "tot_loss": 0.2179, "lr": 3.41e-04, "epoch": 3, "loss_scale": 8.0}),
                (115350, {"loss": 0.2765}),
            ),
            ranks=(0, 6),
        ),
        Sample(  # ZipVoice on icefall's loop: global_batch_idx is the step; then a validation summary
            "2025-10-27 17:32:39,748 INFO [train_zipvoice.py:731] Epoch 1, batch 49, global_batch_idx: 50, "
            "batch size: 25, loss[loss=0.06789, over 17994.00 frames. ], tot_loss[loss=0.06891, over "
            "778288.75 frames. ], cur_lr: 1.00e-04, grad_scale: 65536.0\n"
            "2025-03-09 17:13:38,602 INFO [finetune.py:1166] Validation on yodas: Epoch 1, validation: "
            "loss=7.573, simple_loss=6.882, pruned_loss=6.899, over 933255.00 frames.\n",
            steps=(
                (50, {"loss": 0.06789, "lr": 1e-4, "loss_scale": 65536.0}),
                (50, {"eval_loss": 7.573, "eval_simple_loss": 6.882}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._last_step: int | None = None

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if ", batch " in text and "loss[" in text:
            return self._train(text, out)
        if ", validation: " in text:
            return self._valid(text, out)
        return False

    def _train(self, text: str, out: Emitter) -> bool:
        got = _read(_TRAIN, text)
        if got is None:
            return False
        metrics, reading, rank = got
        if "grad_scale" in metrics:
            metrics["loss_scale"] = metrics.pop("grad_scale")
        tot = _TOT.search(text)
        if tot is not None:
            metrics["tot_loss"] = float(tot.group(1))
        step = reading.step if reading.step is not None else int(reading.inner or 0)
        self._last_step = step
        out.step(step, metrics, rank=rank)
        return True

    def _valid(self, text: str, out: Emitter) -> bool:
        got = _read(_VALID, text)
        if got is None:
            return False
        metrics, _, rank = got
        evaluation = {
            ("eval_loss" if k == "loss" else k if k == "epoch" else "eval_" + snake(k)): v for k, v in metrics.items()
        }
        out.step(self._last_step, evaluation, rank=rank)
        return True


def _read(pattern: re.Pattern[str], text: str) -> tuple[dict[str, float], Reading, int | None] | None:
    """A training or validation line's metrics (with its epoch), the reading, and the `(r/w)` rank."""
    m = pattern.search(text)
    reading = read_group(m)
    if m is None or reading is None or "loss" not in reading.metrics:
        return None
    metrics = {**reading.metrics, "epoch": float(m.group("epoch"))}
    rank = int(m.group("rank")) if m.group("rank") is not None else None
    return metrics, reading, rank
