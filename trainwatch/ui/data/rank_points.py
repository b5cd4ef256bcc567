"""Every rank's value per step folded across ranks once, kept between a chart's redraws.

256 per-rank files usually log the same steps: their traces share one x array. The lowest,
highest and summed value over the ranks at each of those points does not depend on the
chart's columns or x range, so it is computed once per new point (the series only grow) and
a redraw reduces one folded series to the columns instead of 256 (`rank_band`).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from operator import gt

from trainwatch.ui.data.charts import Trace


class RankPoints:
    """The ranks sharing one x array, folded per point: min, max and sum over the ranks."""

    def __init__(self) -> None:
        self._labels: tuple[str, ...] = ()
        self._xs = b""  # the shared x array's bytes when last folded
        self._ys: list[bytes] = []  # each rank's y bytes when last folded (a changed point: fold again)
        self.low: list[float] = []
        self.high: list[float] = []
        self.total: list[float] = []
        self.folds = 0  # points folded so far (tests: only new points are folded)

    def shared(self, traces: Sequence[Trace]) -> list[Trace]:
        """The traces this folds: those with the first trace's x array, all-finite values and
        steps that never go back. Empty when fewer than two do."""
        if len(traces) < 2:
            return []
        first = traces[0].xs
        if not isinstance(first, array) or first.typecode != "d" or len(first) < 1:
            return []
        xs = first.tobytes()
        group = [
            t
            for t in traces
            if isinstance(t.xs, array)
            and isinstance(t.ys, array)
            and t.ys.typecode == "d"
            and len(t.ys) == len(first)
            and t.xs.tobytes() == xs
        ]
        if len(group) < 2 or any(map(gt, first[:-1], first[1:])):
            return []
        return group

    def fold(self, group: Sequence[Trace]) -> bool:
        """Bring the folded points up to date with `group` (from `shared`): only points added since
        the last call are folded, unless the ranks, the steps or an earlier value changed.
        False if a value is not finite (the caller then reduces each trace on its own)."""
        labels = tuple(t.label for t in group)
        xs = group[0].xs.tobytes()
        ys = [t.ys.tobytes() for t in group]
        seen = len(self._xs)
        if not (
            labels == self._labels
            and xs[:seen] == self._xs
            and all(y[:seen] == old for y, old in zip(ys, self._ys, strict=True))
        ):
            self._labels, self._xs, self._ys = labels, b"", []
            self.low, self.high, self.total = [], [], []
            seen = 0
        start = seen // 8
        points = list(zip(*(t.ys[start:] for t in group), strict=True))
        low = list(map(min, points))
        high = list(map(max, points))
        total = list(map(sum, points))
        if not math.isfinite(sum(total)):
            self._labels, self._xs, self._ys = (), b"", []
            self.low, self.high, self.total = [], [], []
            return False
        self.low += low
        self.high += high
        self.total += total
        self.folds += len(points)
        self._labels, self._xs, self._ys = labels, xs, ys
        return True

    def reduce(
        self,
        xs: Sequence[float],
        ranks: int,
        bounds: Sequence[float],
        low: list[float],
        high: list[float],
        total: list[float],
        count: list[int],
    ) -> None:
        """Add the folded points to the columns cut at `bounds` (xs: the shared x array)."""
        n = len(self.low)
        cuts = (0, *(bisect_left(xs, x, 0, n) for x in bounds), n)
        for c in range(len(cuts) - 1):
            a, e = cuts[c], cuts[c + 1]
            if e <= a:
                continue
            low[c] = min(low[c], min(self.low[a:e]))
            high[c] = max(high[c], max(self.high[a:e]))
            total[c] += sum(self.total[a:e])
            count[c] += (e - a) * ranks
