"""FuxiCTR (reczoo; the BARS benchmark's CTR and matching models), one block per epoch:

    2022-10-29 15:06:12,943 P24463 INFO [Metrics] AUC: 0.981040 - logloss: 0.162076
    2022-10-29 15:06:12,944 P24463 INFO Save best model: monitor(max): 0.981040
    2022-10-29 15:06:12,951 P24463 INFO --- 50/50 batches finished ---
    2022-10-29 15:06:12,993 P24463 INFO Train loss: 0.177385
    2022-10-29 15:06:12,994 P24463 INFO ************ Epoch=7 end ************

The validation metrics come first, then the epoch's training loss, then its end: one record per
epoch, with the epoch and no step number, its `[Metrics]` as `eval_*` (`logloss` is the loss of
a click model: `eval_loss`). Early stopping prints no end line for the last epoch (`Early stopping
at epoch=15`, then its `Train loss`, then `Training finished.`). After training, the best model's
`****** Validation evaluation ******` and `******** Test evaluation ********` give one record
each (`eval_*`, `test_*`), without an epoch. `Save best model` and `Training finished.` are the
checkpoint and finish modules'.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import field_name
from trainwatch.numbers import NUMBER, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_METRICS = re.compile(r"\[Metrics\] (?P<rest>.+)")  # (`.+?\s*$` tried a run of spaces from each of its characters)
_PAIR = re.compile(rf"(?P<name>[A-Za-z][\w@.-]{{0,40}}): (?P<value>{NUMBER}|nan|inf)")
_TRAIN_LOSS = re.compile(rf"\bINFO Train loss: (?P<loss>{NUMBER}|nan|inf)\s*$")
# (three stars, not `\*{3,}`: a search from each star of a long run would count the rest of it)
_EPOCH_END = re.compile(r"\*{3} Epoch=(?P<epoch>\d{1,9}) end \*{3}")
_EARLY_STOP = re.compile(r"\bEarly stopping at epoch=(?P<epoch>\d{1,9})\b")
_FINISHED = re.compile(r"\bINFO Training finished\.\s*$")
_EVALUATION = re.compile(r"\*{3} (?P<split>Validation|Test) evaluation \*{3}")


class FuxiCTRParser(Parser):
    name = "fuxictr"
    title = "FuxiCTR epoch blocks (reczoo BARS)"
    triggers = (
        "[Metrics] ",
        "Train loss: ",
        " end ****",
        "Early stopping at epoch=",
        "Training finished.",
        " evaluation ***",
    )
    example = "INFO [Metrics] AUC: 0.981040 - logloss: 0.162076 ... INFO ************ Epoch=7 end ************"
    priority = 100
    samples = (
        Sample(  # reczoo/BARS: DeepFM on Frappe (an early stop at epoch 9, then the best model's evaluations)
            "2022-10-29 15:06:12,943 P24463 INFO [Metrics] AUC: 0.981040 - logloss: 0.162076\n"
            "2022-10-29 15:06:12,944 P24463 INFO Save best model: monitor(max): 0.981040\n"
            "2022-10-29 15:06:12,951 P24463 INFO --- 50/50 batches finished ---\n"
            "2022-10-29 15:06:12,993 P24463 INFO Train loss: 0.177385\n"
            "2022-10-29 15:06:12,994 P24463 INFO ************ Epoch=8 end ************\n"
            "2022-10-29 15:06:19,017 P24463 INFO [Metrics] AUC: 0.980844 - logloss: 0.186768\n"
            "2022-10-29 15:06:19,018 P24463 INFO Early stopping at epoch=9\n"
            "2022-10-29 15:06:19,018 P24463 INFO --- 50/50 batches finished ---\n"
            "2022-10-29 15:06:19,045 P24463 INFO Train loss: 0.174715\n"
            "2022-10-29 15:06:19,045 P24463 INFO Training finished.\n"
            "2022-10-29 15:06:56,626 P24463 INFO ****** Validation evaluation ******\n"
            "2022-10-29 15:06:56,938 P24463 INFO [Metrics] AUC: 0.985168 - logloss: 0.142101\n"
            "2022-10-29 15:06:56,989 P24463 INFO ******** Test evaluation ********\n"
            "2022-10-29 15:06:57,313 P24463 INFO [Metrics] AUC: 0.984243 - logloss: 0.148174\n",
            steps=(
                (None, {"epoch": 8, "loss": 0.177385, "eval_loss": 0.162076, "eval_auc": 0.98104}),
                (None, {"epoch": 9, "loss": 0.174715, "eval_loss": 0.186768}),
                (None, {"eval_loss": 0.142101, "eval_auc": 0.985168}),
                (None, {"test_loss": 0.148174, "test_auc": 0.984243}),
            ),
            events=("checkpoint", "finished"),
        ),
    )

    def __init__(self) -> None:
        self._metrics: dict[str, float] = {}
        self._line: int | None = None  # the block's first line, and its time
        self._time: str | None = None
        self._stopped_at: int | None = None  # the epoch an early stop named (it prints no end line)
        self._trained = False  # `Training finished.`: what follows is the best model's evaluation
        self._prefix = "eval_"  # the split a `[Metrics]` line reports

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        m = _METRICS.search(text)
        if m is not None:
            got = {self._prefix + n: v for n, v in _pairs(m.group("rest"))}
            if not got:
                return False
            self._take(got, line, text)
            if self._prefix != "eval_" or self._trained:  # a final evaluation: its own record
                self._emit(out, None)
            return True
        m = _TRAIN_LOSS.search(text)
        if m is not None:
            loss = parse_number(m.group("loss"))
            if loss is not None:
                self._take({"loss": loss}, line, text)
            return True
        m = _EPOCH_END.search(text)
        if m is not None:
            self._emit(out, int(m.group("epoch")))
            return True
        m = _EARLY_STOP.search(text)
        if m is not None:
            self._stopped_at = int(m.group("epoch"))
            return True
        if _FINISHED.search(text):
            if self._metrics:
                self._emit(out, self._stopped_at)
            self._stopped_at, self._trained = None, True
            return False  # (the finish module reports the finish)
        m = _EVALUATION.search(text)
        if m is not None:
            self._emit(out, None)
            self._prefix = "eval_" if m.group("split") == "Validation" else "test_"
            self._stopped_at, self._trained = None, True
            return True
        return False

    def finish(self, out: Emitter) -> None:
        self._emit(out, None if self._trained else self._stopped_at)

    def _take(self, metrics: dict[str, float], line: Line, text: str) -> None:
        if self._line is None:
            self._line, self._time = line.no, line_time(text)
        for name, value in metrics.items():
            self._metrics.setdefault(name, value)

    def _emit(self, out: Emitter, epoch: int | None) -> None:
        if self._metrics:
            metrics = dict(self._metrics)
            if epoch is not None:
                metrics["epoch"] = float(epoch)
            out.step(None, metrics, time=self._time, line=self._line)
        self._metrics, self._line, self._time = {}, None, None


def _pairs(rest: str) -> list[tuple[str, float]]:
    """`AUC: 0.981040 - logloss: 0.162076` -> (auc, ...), (loss, ...): `logloss` is the loss."""
    got: list[tuple[str, float]] = []
    for m in _PAIR.finditer(rest):
        value = parse_number(m.group("value"))
        raw = m.group("name")
        name = "loss" if raw.lower() == "logloss" else field_name(raw, "")
        if value is not None and name:
            got.append((name, value))
    return got
