"""Gradient-boosted trees: XGBoost, LightGBM and CatBoost, one line per boosting round.

    [290]	train-logloss:0.248382	valid-logloss:0.391635            XGBoost (`evals=`), cv: `0.25+0.01`
    [2]	train_set's multi_logloss: 0.803	valid_set's multi_logloss: 0.804   LightGBM (Python)
    [LightGBM] [Info] Iteration:998, training's log loss: 0.004594      LightGBM (CLI), one metric a line
    0:	learn: 0.6569860	test: 0.6570642	best: 0.6570642 (0)	total: 70.1ms	remaining: 1m 10s   CatBoost

The round is the step. Each figure is named by its data set and its metric: the training set's
first loss (`logloss`, `rmse`, `l2`... or CatBoost's `learn`, the loss it optimises) is `loss`,
the first evaluation set's is `eval_loss`; other metrics keep their name (`auc`, `eval_auc`), and a
second evaluation set its own prefix (`valid_1_auc`). The round an early stop reports again after
`Best iteration is:` is not a new step (unless no round after it was printed); the stop itself, LightGBM's `Finish train` and CatBoost's
`Shrink model to first N iterations` end the run.
"""

from __future__ import annotations

import re
from itertools import pairwise

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import duration_at

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|nan|-?inf)"
# `[290]` then the figures (tabs, or spaces where a paste turned them so).
_ROUND = re.compile(r"^\s*\[(?P<round>\d{1,12})\]\s+(?P<rest>\S.*)$")
_XGB_ENTRY = re.compile(
    rf"(?P<data>[A-Za-z_][\w.]{{0,60}})-(?P<metric>[A-Za-z][\w@.:-]{{0,60}}?):(?P<value>{_NUM})(?:\+{_NUM})?"
)
_LGB_ENTRY = re.compile(
    rf"(?<![\w.-])(?P<data>[\w.-]{{1,60}})'s (?P<metric>[\w@.-]{{1,60}}(?: [\w@.-]{{1,60}})?): (?P<value>{_NUM})"
)
_LGB_CLI = re.compile(r"^\s*\[LightGBM\] \[Info\] Iteration:\s*(?P<round>\d{1,12}),\s+(?P<rest>\S.*)$")
_CATBOOST = re.compile(rf"^\s*(?P<round>\d{{1,12}}):\s+learn: (?P<learn>{_NUM})(?P<rest>.*)$")
_CATBOOST_ENTRY = re.compile(rf"\s+(?P<name>test\d*|best): (?P<value>{_NUM})(?: \(\d{{1,12}}\))?")
_CATBOOST_TIME = re.compile(r"\s+(?P<name>total|remaining): ")
# The round repeated after these is the best one, already read.
_BEST = re.compile(r"[Bb]est iteration(?: is)?:\s*$")
_ENDS = (
    re.compile(r"^\s*(?:Stopping\. Best iteration:|Early stopping, best iteration is:|Did not meet early stopping\.)"),
    re.compile(r"^\s*\[LightGBM\] \[Info\] Finish(?:ed)? train(?:ing)?\s*$"),
    re.compile(r"^\s*Shrink model to first \d{1,12} iterations\.\s*$"),
)
# The metrics that are the objective's value (what a person reads as the loss).
_LOSSES = frozenset(
    "logloss mlogloss binary_logloss multi_logloss log_loss cross_entropy xentropy multiclass crossentropy"
    " rmse mse l2 l1 mae rmsle mape huber quantile poisson poisson_nloglik gamma_nloglik tweedie_nloglik"
    " cox_nloglik aft_nloglik binary_crossentropy".split()
)
_TRAIN_SETS = frozenset(("train", "training", "train_set", "learn", "dtrain", "trn"))
_MAX_ENTRIES = 64


def _name(data: str, metric: str, names: dict[str, str], out: dict[str, float], value: float) -> None:
    """One figure of a round, named for its data set (see the module docstring)."""
    data, metric = snake(data), snake(metric)
    if data in _TRAIN_SETS:
        prefix = ""
    elif names.setdefault("eval", data) == data:
        prefix = "eval_"
    else:
        prefix = f"{data}_"
    loss = metric in _LOSSES
    key = f"{prefix}loss" if loss else f"{prefix}{metric}"
    if loss and key in out:
        key = f"{prefix}{metric}"  # a second loss metric keeps its own name
    out.setdefault(key, value)


class GbdtParser(Parser):
    name = "gbdt"
    title = "XGBoost / LightGBM / CatBoost"
    triggers = ("]\t", "] ", "learn: ", "est iteration", "early stopping", "Finish", "Shrink model")
    example = "[290]\ttrain-logloss:0.248382\tvalid-logloss:0.391635"
    priority = 400  # (after the frameworks with hot lines: its triggers `] ` cost every line tried before it)
    samples = (
        Sample(  # dmlc/xgboost issue #3366: evals=[train, valid], early stopping
            "[290]\ttrain-logloss:0.248382\tvalid-logloss:0.391635\n"
            "[300]\ttrain-logloss:0.245682\tvalid-logloss:0.392021\n"
            "Stopping. Best iteration:\n"
            "[290]\ttrain-logloss:0.248382\tvalid-logloss:0.391635\n",
            steps=((290, {"loss": 0.248382, "eval_loss": 0.391635}), (300, {"loss": 0.245682})),
            events=("finished",),
        ),
        Sample(  # autogluon/autogluon issue #1402: LightGBM inside AutoGluon, two metrics per set
            "\t[2]\ttrain_set's multi_logloss: 0.803377\ttrain_set's balanced_accuracy: 0.539092"
            "\tvalid_set's multi_logloss: 0.80468\tvalid_set's balanced_accuracy: 0.538565\n",
            steps=(
                (
                    2,
                    {
                        "loss": 0.803377,
                        "balanced_accuracy": 0.539092,
                        "eval_loss": 0.80468,
                        "eval_balanced_accuracy": 0.538565,
                    },
                ),
            ),
        ),
        Sample(  # microsoft/LightGBM issue #39: the CLI, one metric a line
            "[LightGBM] [Info] Iteration:998, training's auc: 1.000000\n"
            "[LightGBM] [Info] Iteration:998, training's log loss: 0.004594\n"
            "[LightGBM] [Info] Finish train\n",
            steps=((998, {"auc": 1.0, "loss": 0.004594}),),
            events=("finished",),
        ),
        Sample(  # catboost/catboost issue #541: fit(verbose=100) with an eval set
            "0:\tlearn: 0.6569860\ttest: 0.6570642\tbest: 0.6570642 (0)\ttotal: 70.1ms\tremaining: 1m 10s\n"
            "100:\tlearn: 0.1697219\ttest: 0.1530068\tbest: 0.1530068 (100)\ttotal: 3.7s\tremaining: 33s\n",
            steps=(
                (0, {"loss": 0.656986, "eval_loss": 0.6570642, "eta_s": 70.0}),
                (100, {"loss": 0.1697219, "eval_loss": 0.1530068, "elapsed_s": 3.7, "eta_s": 33.0}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # "eval": the data set named first that is not a training set
        self._repeat = False  # the next round is the best one, reported again
        self._last: int | None = None  # the last round read

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        head = text.lstrip()[:1]
        if head != "[" and not head.isdigit():
            return self._stop(text, line, out)
        m = _ROUND.match(text) or _LGB_CLI.match(text)
        if m is not None:
            metrics = self._entries(m.group("rest").rstrip())
        else:
            m = _CATBOOST.match(text)
            if m is None:
                return self._stop(text, line, out)  # (`[LightGBM] [Info] Finish train`)
            metrics = self._catboost(m)
        if not metrics:
            return False
        n = int(m.group("round"))
        if self._last is not None and n < self._last and not self._repeat:
            self._names.clear()  # a new model's rounds
        if self._repeat:
            self._repeat = False
            if self._last is not None and n <= self._last:
                self._names.clear()  # (its sets' names were read again: the next model names its own)
                return True  # (the best round again, at or before the last one read: not a step going back)
        self._last = n
        out.step(n, metrics)
        return True

    def _stop(self, text: str, line: Line, out: Emitter) -> bool:
        """An early stop or the end of training; the best round announced (printed next again)."""
        if not ("iteration" in text or "Finish" in text or "Shrink" in text or "stopping" in text):
            return False
        for end in _ENDS:
            if end.search(text):
                self._repeat = "est iteration" in text
                self._names.clear()  # (the next model of an AutoGluon or CV log names its own sets)
                out.event("finished", "info", text.strip(), line=line.no)
                return True
        if _BEST.search(text):
            self._repeat = True
            return True
        return False

    def _entries(self, rest: str) -> dict[str, float] | None:
        """The figures of a round, when the whole rest is XGBoost's or LightGBM's entries."""
        tokens = rest.replace(",", " ").split()
        if len(tokens) <= _MAX_ENTRIES:
            xgb = [_XGB_ENTRY.fullmatch(t) for t in tokens]  # (one entry a token: linear on any line)
            if xgb and all(xgb):
                return self._named(xgb)  # type: ignore[arg-type]
        if "'s " not in rest:
            return None
        found = list(_LGB_ENTRY.finditer(rest))
        if not found or len(found) > _MAX_ENTRIES:
            return None
        between = [
            rest[: found[0].start()],
            *(rest[a.end() : b.start()] for a, b in pairwise(found)),
            rest[found[-1].end() :],
        ]
        if any(gap.strip(" \t,") for gap in between):
            return None
        return self._named(found)

    def _named(self, found: list[re.Match[str]]) -> dict[str, float] | None:
        metrics: dict[str, float] = {}
        for f in found:
            value = parse_number(f.group("value"))
            if value is not None:
                _name(f.group("data"), f.group("metric"), self._names, metrics, value)
        return metrics or None

    def _catboost(self, m: re.Match[str]) -> dict[str, float] | None:
        learn = parse_number(m.group("learn"))
        if learn is None:
            return None
        metrics = {"loss": learn}
        rest, at = m.group("rest"), 0
        while at < len(rest):
            entry = _CATBOOST_ENTRY.match(rest, at)
            if entry is not None:
                value = parse_number(entry.group("value"))
                name = entry.group("name")
                if value is not None:
                    metrics[
                        "eval_loss" if name == "test" else "best_eval_loss" if name == "best" else f"{name}_loss"
                    ] = value
                at = entry.end()
                continue
            timed = _CATBOOST_TIME.match(rest, at)
            if timed is None:
                return None if rest[at:].strip() else metrics
            duration = duration_at(rest, timed.end())
            if duration is None:
                return None
            metrics["elapsed_s" if timed.group("name") == "total" else "eta_s"] = duration[0]
            at = duration[1]
        return metrics
