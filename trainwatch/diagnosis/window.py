"""Robust statistics over the recent window of a series, and the number formats reports use.

Medians and MADs, not means and standard deviations: a training log is full of one-off
outliers (the first step, an eval pause, a checkpoint save) that must not move a baseline.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from trainwatch.store.series import Series

RECENT = 512  # points of a series the diagnosis looks at (the dashboard calls it on a timer)
WARMUP_POINTS = 3  # first records of a series excluded from baselines (compilation, cache warm-up)


def finite(values: Iterable[float]) -> list[float]:
    return [v for v in values if not (math.isnan(v) or math.isinf(v))]


def median(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    n = len(s)
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


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


def fmt_seconds(s: float) -> str:
    """0.91 s, 38 ms, 14m, 6.2h: the precision a person reads at a glance."""
    if math.isnan(s):
        return "?"
    if s < 0.001:
        return f"{s * 1e6:.0f} µs"
    if s < 0.1:
        return f"{s * 1000:.0f} ms"
    if s < 10:
        return f"{s:.2g} s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 90 * 60:
        return f"{s / 60:.0f}m"
    if s < 48 * 3600:
        return f"{s / 3600:.1f}h"
    if s < 365 * 86400:
        return f"{s / 86400:.0f}d"
    return f"{s / (365.25 * 86400):.1f} years"


def fmt_duration(s: float) -> str:
    """An ETA / elapsed time: 3h12m, 2d4h, 45s."""
    if math.isnan(s) or math.isinf(s):
        return "?"
    s = max(0, round(s))
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        return f"{d}d{h}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"


def fmt_value(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
        return f"{v:.3g}"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.4g}"


def pct(x: float) -> str:
    return f"{x * 100:.0f}%"
