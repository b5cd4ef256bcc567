"""Evaluation against training: the validation loss rising for a sustained stretch while the
training loss keeps falling is overfitting, and the checkpoint to keep is the one nearest the
validation minimum."""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice

from trainwatch.diagnosis.segments import superseded
from trainwatch.diagnosis.units import fmt_value
from trainwatch.diagnosis.window import median
from trainwatch.store.store import Store

MIN_EVALS_AFTER_BEST = 3  # a sustained rise: this many evaluations after the best, all above it
MIN_RISE = 0.05  # ... ending at least 5 % above the best
TRAIN_WINDOW = 5  # training-loss points averaged (median) at each end of the stretch


@dataclass(frozen=True)
class EvalFigures:
    """The eval series of one rank stream, summarised (summary --json `eval`)."""

    best_step: int
    best: float
    last_step: int
    last: float
    train_at_best: float  # median training loss around the best evaluation; nan if none
    train_now: float
    overfitting: bool

    @property
    def message(self) -> str:
        fell = ""
        if not math.isnan(self.train_at_best) and not math.isnan(self.train_now):
            fell = f" while training loss fell {fmt_value(self.train_at_best)} → {fmt_value(self.train_now)}"
        since = f"~{self.best_step // 1000}k" if self.best_step >= 1000 else str(self.best_step)
        return (
            f"validation loss best {fmt_value(self.best)} at {self.best_step:,}, now {fmt_value(self.last)} at "
            f"{self.last_step:,}{fell}: the run is overfitting since {since}"
        )


def _near(steps: list[float], values: list[float], at: float) -> float:
    """The median of the TRAIN_WINDOW finite values whose steps are nearest `at` (ties: the
    lower values). A series is in step order but after a relaunch: found outward from `at`'s
    place, not by sorting every point (65k points took 35 ms, twice in each judgement)."""
    if any(map(operator.gt, steps, islice(steps, 1, None))):  # out of order: all of them
        finite = sorted((abs(s - at), v) for s, v in zip(steps, values, strict=False) if math.isfinite(v))
    else:
        finite = []
        hi = bisect_left(steps, at)
        lo, n = hi - 1, len(steps)
        while lo >= 0 or hi < n:
            below = at - steps[lo] if lo >= 0 else math.inf
            above = steps[hi] - at if hi < n else math.inf
            d = min(below, above)
            if len(finite) >= TRAIN_WINDOW and d > finite[TRAIN_WINDOW - 1][0]:
                break  # (equally near ones are all taken: the tie goes to the lower values)
            if below <= above:
                i, lo = lo, lo - 1
            else:
                i, hi = hi, hi + 1
            if math.isfinite(values[i]):
                finite.append((d, values[i]))
        finite.sort()
    return median([v for _, v in finite[:TRAIN_WINDOW]]) if finite else math.nan


def eval_figures(store: Store) -> EvalFigures | None:
    """The validation figures of the stream with the most evaluations; None without two of them."""
    with store.lock:
        evals = {k: s for k, s in store.series_for("eval_loss").items() if not superseded(store, k) and len(s) >= 2}
        if not evals:
            return None
        key, series = max(evals.items(), key=lambda kv: len(kv[1]))
        pts = [(s, v) for s, v in zip(series.steps, series.values, strict=False) if math.isfinite(v)]
        if len(pts) < 2:
            return None
        train = store.series.get(key.series_key("metric", "loss"))
        t_steps = list(train.steps) if train is not None else []
        t_values = list(train.values) if train is not None else []
    best_i = min(range(len(pts)), key=lambda i: pts[i][1])
    best_step, best = pts[best_i]
    last_step, last = pts[-1]
    after = pts[best_i + 1 :]
    train_at_best = _near(t_steps, t_values, best_step)
    train_now = _near(t_steps, t_values, last_step)
    rising = (
        len(after) >= MIN_EVALS_AFTER_BEST
        and all(v > best for _, v in after)
        and last >= best * (1 + MIN_RISE)
        and not math.isnan(train_at_best)
        and train_now < train_at_best
    )
    return EvalFigures(int(best_step), best, int(last_step), last, train_at_best, train_now, rising)
