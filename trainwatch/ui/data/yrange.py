"""A chart's y range that a warm-up outlier cannot ruin, and that still shows a divergence.

The rule (pure, on the points a chart draws):
- Pool the finite y values of every drawn series; take their 1st and 99th percentiles (q1, q99).
- A point is *far* when it lies more than `FAR` x (q99 - q1) beyond them. With no far point (or
  fewer than `MIN_POINTS` points) the range is the plain min/max.
- A far point is left out of the scale only when it is in the warm-up (the first
  `WARMUP_FRACTION` of the x span: compile time, first-step allocation) or is a single isolated
  point (both its neighbours are not far). A series' last point is never isolated: it may be
  the start of a divergence. Any other far point (a loss that climbs and stays) sets the range.
- Left-out points are returned as `Outlier`s so the chart marks them at the edge with their
  value; the range gets a `MARGIN` on each clipped side so the edge markers sit off the line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WARMUP_FRACTION = 0.05
FAR = 1.0
MARGIN = 0.05
MIN_POINTS = 10


@dataclass(frozen=True)
class Outlier:
    """A point drawn at the edge of the chart instead of setting its scale."""

    x: float
    y: float
    above: bool


@dataclass(frozen=True)
class YRange:
    lo: float
    hi: float
    outliers: tuple[Outlier, ...] = ()


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank quantile of already sorted values."""
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


def robust_range(series: Sequence[tuple[Sequence[float], Sequence[float]]]) -> YRange | None:
    """The y range for series of (xs, ys), by the rule in this module's docstring; None with no
    finite point."""
    values = sorted(y for _xs, ys in series for y in ys if math.isfinite(y))
    if not values:
        return None
    plain = YRange(values[0], values[-1])
    if len(values) < MIN_POINTS:
        return plain
    q1, q99 = quantile(values, 0.01), quantile(values, 0.99)
    spread = (q99 - q1) or (abs(q99) * 0.1 or 1.0)
    lo_cut, hi_cut = q1 - FAR * spread, q99 + FAR * spread
    if values[0] >= lo_cut and values[-1] <= hi_cut:
        return plain
    xs_all = [x for xs, _ys in series for x in xs if math.isfinite(x)]
    x0, x1 = min(xs_all), max(xs_all)
    warm_end = x0 + WARMUP_FRACTION * (x1 - x0)

    def far(y: float) -> bool:
        return y < lo_cut or y > hi_cut

    kept: list[float] = []
    out: list[Outlier] = []
    for xs, ys in series:
        n = min(len(xs), len(ys))
        for j in range(n):
            y = ys[j]
            if not math.isfinite(y):
                continue
            if far(y):
                isolated = j < n - 1 and (j == 0 or not far(ys[j - 1])) and not far(ys[j + 1])
                if xs[j] <= warm_end or isolated:
                    out.append(Outlier(xs[j], y, y > hi_cut))
                    continue
            kept.append(y)
    if not out or not kept:
        return plain
    lo, hi = min(kept), max(kept)
    pad = MARGIN * ((hi - lo) or spread)
    if any(not o.above for o in out):
        lo -= pad
    if any(o.above for o in out):
        hi += pad
    return YRange(lo, hi, tuple(out))
