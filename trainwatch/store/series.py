"""A bounded numeric series: steps and values in flat arrays, no object per point.

When a series outgrows its capacity, its older half is compacted by keeping the minimum
and maximum of each group of four points: memory stays bounded while spikes (the thing
a chart must still show) survive. The newest quarter of capacity is always exact.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from operator import itemgetter

from trainwatch.store.blocks import Blocks, BlockSummary

DEFAULT_CAPACITY = 65_536
_NAN_ARRAY = array("d", [math.nan])
_NAN_BYTES = _NAN_ARRAY.tobytes()  # (a NaN of another bit pattern counts as a time: the safe side)


class Series:
    __slots__ = ("_blocks", "capacity", "compactions", "count", "steps", "timed", "times", "values")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.steps = array("d")
        self.values = array("d")
        self.times = array("d")  # log wall time (epoch seconds) or nan
        self.capacity = max(64, capacity)
        self.compactions = 0
        self.count = 0  # points ever appended
        # Whether a point ever had a log time: the catch-up's template rows have none, and a
        # compaction of a series without any needs no gather of its times (all NaN).
        self.timed = False
        self._blocks: BlockSummary | None = None

    def __len__(self) -> int:
        return len(self.values)

    def append(self, step: float, value: float, time: float = math.nan) -> None:
        self.steps.append(step)
        self.values.append(value)
        self.times.append(time)
        if time == time:
            self.timed = True
        self.count += 1
        if len(self.values) > self.capacity:
            self._compact()

    def extend(self, steps: array[float], values: array[float], times: array[float]) -> None:
        """`append` of every point in turn, in slices: compaction happens at the same points."""
        n = len(values)
        if not self.timed and times.tobytes() != _NAN_BYTES * n:
            self.timed = True
        i = 0
        while i < n:
            j = min(n, i + self.capacity + 1 - len(self.values))
            self.steps.extend(steps[i:j])
            self.values.extend(values[i:j])
            self.times.extend(times[i:j])
            self.count += j - i
            i = j
            if len(self.values) > self.capacity:
                self._compact()

    def _compact(self) -> None:
        half = (len(self.values) // 2) // 4 * 4
        steps, values, times = self.steps, self.values, self.times
        keep = _keep_min_max(values, half)
        # One itemgetter call gathers the kept points (3x a `map` of `__getitem__`); a tuple, as
        # `half` >= 32 (capacity >= 64) keeps at least one point per group of four.
        pick = itemgetter(*keep)
        new_steps = array("d", pick(steps))
        new_values = array("d", pick(values))
        new_times = array("d", pick(times)) if self.timed else _NAN_ARRAY * len(new_values)
        new_steps.extend(steps[half:])
        new_values.extend(values[half:])
        new_times.extend(times[half:])
        self.steps, self.values, self.times = new_steps, new_values, new_times
        self.compactions += 1

    def block_summary(self) -> BlockSummary:
        """The block summary of the values since the last compaction (`trainwatch.store.blocks`):
        brought up to date by its `update` with these values or a copy of them (one reader only:
        the UI thread, which may do it after releasing the store's lock)."""
        b = self._blocks
        if b is None or b.compactions != self.compactions:
            b = self._blocks = BlockSummary(self.compactions)
        return b

    def blocks(self) -> Blocks:
        """The block summaries of the values, brought up to date."""
        return self.block_summary().update(self.values)

    @property
    def last(self) -> float | None:
        return self.values[-1] if self.values else None

    @property
    def last_step(self) -> float | None:
        return self.steps[-1] if self.steps else None

    def tail(self, n: int) -> Sequence[float]:
        return self.values[-n:]

    def window(self, last_n: int | None = None) -> tuple[Sequence[float], Sequence[float]]:
        if last_n is None:
            return self.steps, self.values
        return self.steps[-last_n:], self.values[-last_n:]


def _keep_min_max(values: array[float], half: int) -> list[int]:
    """Indices kept of values[:half]: per group of four the first minimum and the first
    maximum, in order; NaNs are skipped, an all-NaN group keeps its ends."""
    keep: list[int] = []  # indices kept, in order
    # Groups of four as tuples (C-level strided slices): the per-group work is a few
    # comparisons, since compaction touches two points per point appended. Without NaN, the
    # first minimum (maximum) is found by plain comparisons: the same index as
    # `g.index(min(g))`, without four calls per group (compaction was a fifth of a catch-up).
    groups = zip(values[0:half:4], values[1:half:4], values[2:half:4], values[3:half:4], strict=True)
    i = -4
    for a, b, c, d in groups:
        i += 4
        if a == a and b == b and c == c and d == d:  # no NaN: the first min and the first max
            lo, m = 0, a
            if b < m:
                lo, m = 1, b
            if c < m:
                lo, m = 2, c
            if d < m:
                lo = 3
            hi, m = 0, a
            if b > m:
                hi, m = 1, b
            if c > m:
                hi, m = 2, c
            if d > m:
                hi = 3
        else:
            g = (a, b, c, d)
            finite = [j for j in range(4) if not math.isnan(g[j])]
            if not finite:
                keep += (i, i + 3)
                continue
            lo = min(finite, key=g.__getitem__)
            hi = max(finite, key=g.__getitem__)
        if lo < hi:
            keep += (i + lo, i + hi)
        elif hi < lo:
            keep += (i + hi, i + lo)
        else:
            keep.append(i + lo)
    return keep
