"""Robust statistics over the recent window of a series: the one median, and the one pace.

Medians and MADs, not means and standard deviations: a training log is full of one-off
outliers (the first step, an eval pause, a checkpoint save) that must not move a baseline.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from trainwatch.store.series import Series

RECENT = 512  # points of a series the diagnosis looks at (the dashboard calls it on a timer)
WARMUP_POINTS = 3  # first records of a series excluded from baselines (compilation, cache warm-up)


def finite(values: Iterable[float]) -> list[float]:
    return [v for v in values if not (math.isnan(v) or math.isinf(v))]


def median(values: Iterable[float]) -> float:
    """The median; nan when there are no values. Every median trainwatch prints is this one."""
    return median_sorted(sorted(values))


def median_sorted(s: Sequence[float]) -> float:
    """`median` of values already sorted (a window kept sorted as it slides needs no sort)."""
    n = len(s)
    if not n:
        return math.nan
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def median_without(ordered: list[float], value: float) -> float:
    """The median of `ordered` (sorted, no NaN) less one occurrence of `value`: what `median` of
    the others gives, without a sort per rank (256 ranks: a judgement's every rank against the rest)."""
    i = bisect_left(ordered, value)
    return median_sorted(ordered[:i] + ordered[i + 1 :])


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def mad(values: Sequence[float], center: float | None = None) -> float:
    """Median absolute deviation, scaled to a standard deviation for normal data."""
    if not values:
        return math.nan
    c = median(values) if center is None else center
    return 1.4826 * median([abs(v - c) for v in values])


def recent(series: Series | None, n: int = RECENT, skip_warmup: bool = True) -> tuple[list[float], list[float]]:
    """(steps, values) of the newest n finite points; the first records of a run are left out."""
    if series is None or not len(series):
        return [], []
    total = len(series)
    start = max(0, total - n)
    if skip_warmup and series.compactions == 0:
        start = max(start, min(WARMUP_POINTS, total - 1))
    steps = series.steps[start:]
    values = series.values[start:]
    if math.isfinite(sum(values)):  # no NaN/inf (a finite sum says so, C level): the usual case
        return steps.tolist(), values.tolist()
    pairs = [(s, v) for s, v in zip(steps, values, strict=False) if not (math.isnan(v) or math.isinf(v))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def recent_values(series: Series | None, n: int = RECENT, skip_warmup: bool = True) -> list[float]:
    return recent(series, n, skip_warmup)[1]


PACE_WINDOW = 64  # step-time records the pace is the median of


def pace_s(series: Series | None) -> float:
    """The pace every screen shows: the median printed step time of the recent window (after
    warm-up); nan when the log prints no step time."""
    return median(recent_values(series, PACE_WINDOW))


def clock_rises(steps: Sequence[float], values: Sequence[float]) -> Iterator[tuple[int, float]]:
    """(index, rise per step) of each print of a clock (`elapsed_s`, seconds since the run began) over
    the print before it: the step time it says. A clock that went back (a restart) says none there."""
    for i in range(1, len(steps)):
        if steps[i] > steps[i - 1] and values[i] >= values[i - 1]:
            yield i, (values[i] - values[i - 1]) / (steps[i] - steps[i - 1])


def clock_pace_s(series: Series | None) -> float:
    """The pace a printed clock says: the median of its rises per step in the recent window; nan with
    fewer than two prints."""
    steps, values = recent(series, PACE_WINDOW, skip_warmup=False)
    rates = [rate for _i, rate in clock_rises(steps, values)]
    return median(rates) if rates else math.nan
