"""Per block of a series' values, what a chart's column needs of it: its minimum and maximum,
where each first occurs, and its sum.

A redraw reduces a series' points (up to the store's ~50k) to the ~110 columns on screen
(`trainwatch.ui.data.reduce.downsample`). With these, a column reads the summaries of the
blocks inside it and the few points at its two edges instead of its ~450 points: the min/max
passes were a fifth of a redraw. A block is summarized once, when a chart first asks, and kept
until the series compacts (its points then move: `Series.blocks` starts again).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field

BLOCK = 64


@dataclass(frozen=True)
class Blocks:
    """The summaries of the first `len(lo)` whole blocks of `BLOCK` points. A block holding a
    NaN or an infinity is not `clean`: its other figures mean nothing (a column touching it is
    reduced from its points, which is how NaN is handled there)."""

    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)
    at_lo: list[int] = field(default_factory=list)  # index of the block's first minimum, in the series
    at_hi: list[int] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    clean: list[bool] = field(default_factory=list)
    size: int = BLOCK


class BlockSummary:
    """The growing summary of one series between two compactions (`compactions` names which)."""

    __slots__ = ("compactions", "summary")

    def __init__(self, compactions: int) -> None:
        self.compactions = compactions
        self.summary = Blocks()

    def update(self, values: array[float]) -> Blocks:
        """Summarize the whole blocks not summarized yet; a copy of every summary (a chart
        reads it while the ingest thread appends)."""
        s = self.summary
        for k in range(len(s.lo), len(values) // BLOCK):
            a = k * BLOCK
            chunk = values[a : a + BLOCK].tolist()
            total = sum(chunk)
            clean = not (math.isnan(total) or math.isinf(total))
            lo, hi = (min(chunk), max(chunk)) if clean else (math.nan, math.nan)
            s.lo.append(lo)
            s.hi.append(hi)
            s.at_lo.append(a + chunk.index(lo) if clean else a)
            s.at_hi.append(a + chunk.index(hi) if clean else a)
            s.total.append(total)
            s.clean.append(clean)
        return Blocks(list(s.lo), list(s.hi), list(s.at_lo), list(s.at_hi), list(s.total), list(s.clean))
