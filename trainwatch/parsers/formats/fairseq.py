"""fairseq training logs: the legacy `| epoch` progress lines and the hydra/logging form.

    | epoch 001:    450 / 1891 loss=11.521, nll_loss=10.881, ppl=1886.05, wps=52922, ups=0.5, wpb=104928, bsz=5325, num_updates=445, lr=8.90889e-05, gnorm=1.543, clip=0%, oom=0, loss_scale=2.000, wall=882, train_wall=756
    2020-10-18 02:34:53 | INFO | train_inner | epoch 001:    100 / 1975 loss=12.834, nll_loss=12.424, ppl=5496.24, wps=130830, ups=2.15, wpb=60755, bsz=1960, num_updates=100, lr=1.009, gnorm=1.448, clip=41, train_wall=48, wall=54
    | epoch 008 | loss 6.326 | nll_loss 5.193 | ppl 36.58 | wps 12876 | ups 4.9 | wpb 2578 | bsz 108 | num_updates 21896 | lr 0.000213706 | gnorm 1.201 | clip 0% | oom 0 | wall 4634 | train_wall 4309
    | epoch 008 | valid on 'valid' subset | valid_loss 6.43844 | valid_nll_loss 5.23288 | valid_ppl 37.61 | num_updates 21896 | best 6.43844

Step is `num_updates` (optimizer updates, as printed); lines without it (fairseq-py 2018's
`| epoch 010  2000 / 8223 loss=1.27 (1.50)`) are not reported. Progress values are means over
the log interval. `wps` (target words/tokens per second) is `tokens_per_s`, `gnorm` is
`grad_norm`, `clip=0%` is `clip_pct`. The end-of-epoch line holds epoch means: its fields get
an `epoch_avg_` prefix so they do not mix with per-interval values. Validation lines give
`eval_loss` (`valid_loss`, 2018's `valid loss` or hydra's plain `loss`) and `valid_*` for the rest;
a validation line without `num_updates` (2018) has no step.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_INNER = re.compile(
    r"\bepoch (?P<epoch>\d{1,18}(?!\d)):\s+(?P<i>\d{1,18}(?!\d)) / (?P<n>\d{1,18}(?!\d)) (?P<rest>\w+=.*)$"
)
_SUMMARY = re.compile(r"\|\s*epoch (?P<epoch>\d{1,18}(?!\d)) \| (?P<rest>(?!valid on)\w+ \S+ \|.*)$")
_VALID = re.compile(r"\|\s*epoch (?P<epoch>\d{1,18}(?!\d)) \| valid on '(?P<subset>[^']+)' subset \| (?P<rest>.*)$")
_RENAME = {"wps": "tokens_per_s", "gnorm": "grad_norm", "loss_scale": "loss_scale", "lr": "lr", "loss": "loss"}


def _value(raw: str) -> tuple[float | None, bool]:
    raw = raw.strip()
    pct = raw.endswith("%")
    return parse_number(raw[:-1] if pct else raw), pct


def _name(key: str, pct: bool) -> str:
    name = _RENAME.get(key, snake(key))
    return f"{name}_pct" if pct else name


class FairseqParser(Parser):
    name = "fairseq"
    title = "fairseq"
    triggers = ("epoch ",)
    example = "| epoch 001:    100 / 1000 loss=9.836, nll_loss=9.012, ppl=516.3, wps=12345, ups=1.23, num_updates=100, lr=0.0005, gnorm=1.234"
    priority = 100
    samples = (
        Sample(  # facebookresearch/fairseq issue #940: legacy progress line, then a validation line
            "| epoch 001:    600 / 1891 loss=11.039, nll_loss=10.320, ppl=1278.29, wps=53936, ups=0.5, wpb=104812, "
            "bsz=5310, num_updates=595, lr=0.000119085, gnorm=1.445, clip=0%, oom=0, loss_scale=2.000, wall=1156, "
            "train_wall=1010\n"
            "| epoch 001 | valid on 'valid' subset | valid_loss 8.11425 | valid_nll_loss 6.8834 | valid_ppl 118.06 | "
            "num_updates 600\n",
            steps=(
                (
                    595,
                    {
                        "loss": 11.039,
                        "lr": 0.000119085,
                        "grad_norm": 1.445,
                        "loss_scale": 2.0,
                        "tokens_per_s": 53936,
                        "epoch": 1,
                    },
                ),
                (600, {"eval_loss": 8.11425}),
            ),
        ),
        Sample(  # facebookresearch/fairseq issue #2338: hydra/logging train_inner lines
            "2020-07-17 07:11:02 | INFO | train_inner | epoch 001:   2800 / 160368 loss=9.255, ppl=611.12, wps=57.3, "
            "ups=0.04, wpb=1613, bsz=80, num_updates=2800, lr=2.8e-05, gnorm=3.23, train_wall=13, wall=1236\n"
            "2020-07-17 07:11:31 | INFO | train_inner | epoch 001:   2900 / 160368 loss=8.979, ppl=504.73, wps=53.5, "
            "ups=0.04, wpb=1504, bsz=64, num_updates=2900, lr=2.9e-05, gnorm=2.39, train_wall=13, wall=1265\n",
            steps=(
                (2800, {"loss": 9.255, "lr": 2.8e-05, "grad_norm": 3.23, "tokens_per_s": 57.3, "epoch": 1}),
                (2900, {"loss": 8.979, "lr": 2.9e-05}),
            ),
        ),
    )

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _INNER.search(text)
        if m:
            pairs = [p.partition("=") for p in m.group("rest").split(", ")]
            return self._emit(out, m.group("epoch"), [(k.strip(), v) for k, eq, v in pairs if eq], "")
        m = _VALID.search(text)
        if m:
            pairs = [p.strip().rpartition(" ") for p in m.group("rest").split(" | ")]
            return self._emit(out, m.group("epoch"), [(k, v) for k, sep, v in pairs if sep], "valid")
        m = _SUMMARY.search(text)
        if m:
            pairs = [p.strip().partition(" ") for p in m.group("rest").split(" | ")]
            return self._emit(out, m.group("epoch"), [(k, v) for k, sep, v in pairs if sep], "epoch_avg")
        return False

    def _emit(self, out: Emitter, epoch: str, pairs: list[tuple[str, str]], kind: str) -> bool:
        step: int | None = None
        metrics: dict[str, float] = {}
        for key, raw in pairs:
            value, pct = _value(raw)
            if value is None or not snake(key):  # `, =53627,` names nothing
                continue
            if key == "num_updates":
                if value.is_integer():
                    step = int(value)
                continue
            name = _name(key, pct)
            if kind == "valid":
                if name in ("loss", "valid_loss"):
                    name = "eval_loss"
                elif not name.startswith("valid_"):
                    name = f"valid_{name}"
            elif kind == "epoch_avg":
                name = f"epoch_avg_{name}"
            metrics.setdefault(name, value)
        if (step is None and kind != "valid") or not metrics:
            return False
        metrics["epoch"] = float(int(epoch))
        out.step(step, metrics)
        return True
