"""Every rank's value per step folded across ranks once, kept between a chart's redraws.

256 per-rank files usually log the same steps: their traces share one x array (up to the few
steps some ranks are ahead by). The lowest, highest and summed value over the ranks at each
of those points does not depend on the chart's columns or x range, so it is computed once per
new point (the series only grow) and a redraw reduces one folded series to the columns instead
of 256 (`rank_band`); the points past the shared ones go to their columns one by one.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from operator import gt

from trainwatch.ui.data.charts import Trace


class RankPoints:
    """The ranks sharing their first points' steps, folded per point: min, max and sum over the ranks."""

    def __init__(self) -> None:
        self._labels: tuple[str, ...] = ()
        self._xs = b""  # the shared steps' bytes when last folded
        self._ys: list[bytes] = []  # each rank's values' bytes when last folded (one changed: fold again)
        self.low: list[float] = []
        self.high: list[float] = []
        self.total: list[float] = []
        self.folds = 0  # points folded so far (tests: only new points are folded)

    def shared(self, traces: Sequence[Trace]) -> tuple[list[Trace], int]:
        """The traces this folds and how many of their first points: those whose first `n` steps
        are the first trace's, `n` being the fewest points any of them has. ([], 0) when fewer
        than two traces share steps, or the shared steps go back."""
        if len(traces) < 2:
            return [], 0
        ref = traces[0].xs
        if not isinstance(ref, array) or ref.typecode != "d" or not len(ref):
            return [], 0
        alike = [
            t
            for t in traces
            if isinstance(t.xs, array)
            and isinstance(t.ys, array)
            and t.ys.typecode == "d"
            and len(t.xs) == len(t.ys)
            and len(t.xs)
            and t.xs[0] == ref[0]
        ]
        if len(alike) < 2:
            return [], 0
        n = min(map(len, (t.xs for t in alike)))
        steps = ref[:n].tobytes()
        group = [t for t in alike if t.xs[:n].tobytes() == steps]
        if len(group) < 2 or any(map(gt, ref[: n - 1], ref[1:n])):
            return [], 0
        return group, n

    def fold(self, group: Sequence[Trace], n: int) -> bool:
        """Bring the folded points up to date with the first `n` points of `group` (`shared`):
        only points not folded before, unless the ranks, the steps or an earlier value changed.
        False if a value is not finite (the caller then reduces each trace on its own)."""
        labels = tuple(t.label for t in group)
        xs = group[0].xs[:n].tobytes()
        ys = [t.ys[:n].tobytes() for t in group]
        seen = len(self._xs)
        if not (
            labels == self._labels
            and seen <= len(xs)
            and xs[:seen] == self._xs
            and all(y[:seen] == old for y, old in zip(ys, self._ys, strict=True))
        ):
            self._forget()
            seen = 0
        start = seen // 8
        points = list(zip(*(t.ys[start:n] for t in group), strict=True))
        low = list(map(min, points))
        high = list(map(max, points))
        total = list(map(sum, points))
        if not math.isfinite(sum(total)):
            self._forget()
            return False
        self.low += low
        self.high += high
        self.total += total
        self.folds += len(points)
        self._labels, self._xs, self._ys = labels, xs, ys
        return True

    def _forget(self) -> None:
        self._labels, self._xs, self._ys = (), b"", []
        self.low, self.high, self.total = [], [], []

    def reduce(
        self,
        group: Sequence[Trace],
        bounds: Sequence[float],
        low: list[float],
        high: list[float],
        total: list[float],
        count: list[int],
    ) -> None:
        """Add the group's points to the columns cut at `bounds`: the folded ones by slices of
        the folded series, those past them (ranks a step ahead) one by one, as `rank_band` does
        for a trace whose steps go back (NaN and infinite values left out)."""
        n = len(self.low)
        xs = group[0].xs
        cuts = (0, *(bisect_left(xs, x, 0, n) for x in bounds), n)
        for c in range(len(cuts) - 1):
            a, e = cuts[c], cuts[c + 1]
            if e <= a:
                continue
            low[c] = min(low[c], min(self.low[a:e]))
            high[c] = max(high[c], max(self.high[a:e]))
            total[c] += sum(self.total[a:e])
            count[c] += (e - a) * len(group)
        for t in group:
            for x, y in zip(t.xs[n:], t.ys[n:], strict=True):
                if math.isfinite(y):
                    c = bisect_right(bounds, x)
                    low[c] = min(low[c], y)
                    high[c] = max(high[c], y)
                    total[c] += y
                    count[c] += 1
