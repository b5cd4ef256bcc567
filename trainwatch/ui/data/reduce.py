"""Series reduced to the terminal's width: min/max envelopes, rank bands, smoothing.

Plotting cost is then bounded by the columns on screen, not by the run length or the rank count.
"""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import add, gt

from trainwatch.diagnosis.window import finite
from trainwatch.store.blocks import Blocks
from trainwatch.ui.data.charts import Trace
from trainwatch.ui.data.rank_points import RankPoints


@dataclass
class Buckets:
    """A series reduced to one column per bucket: the min/max envelope and the mean."""

    env_x: list[float] = field(default_factory=list)
    env_y: list[float] = field(default_factory=list)
    mean_x: list[float] = field(default_factory=list)
    mean_y: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    pairs: bool = False  # the envelope is each column's min and max (else one point per value)


def downsample(
    xs: Sequence[float],
    ys: Sequence[float],
    columns: int,
    positive_only: bool = False,
    means: bool = True,
    blocks: Blocks | None = None,
) -> Buckets:
    """Min/max per column (2 points per column, in order of occurrence) plus the bucket mean.

    Works on slices with C-level min/max/sum, so a million points reduce in a few ms:
    plotting cost is then bounded by the terminal width, not by the run length. `means=False`:
    a chart that draws no mean line skips the sums (a third of the work); `mean_y` is then
    empty, and so is `mean_x`. `blocks`: the summaries of `ys` (`Series.blocks`): a column
    spanning whole clean blocks is read from them and its edge points (the same envelope;
    the mean to rounding), any other column from its points.
    """
    out = Buckets()
    n = min(len(xs), len(ys))
    columns = max(1, columns)
    if n == 0:
        return out
    if n <= 2 * columns:
        for x, y in zip(xs, ys, strict=False):
            if math.isnan(y) or math.isinf(y) or math.isnan(x) or (positive_only and y <= 0):
                continue
            out.env_x.append(x)
            out.env_y.append(y)
            out.mean_x.append(x)
            out.mean_y.append(y)
            out.counts.append(1)
        return out
    # Where in a slice its min and max first occur: a byte search of the slice's doubles (an
    # element's bits are the value min/max return), not `index`, which boxes every element.
    doubles = isinstance(ys, array) and ys.typecode == "d"
    width = n / columns
    for b in range(columns):
        a, e = int(b * width), int((b + 1) * width)
        if e <= a:
            continue
        count = e - a
        if blocks is not None:
            found = _from_blocks(ys, a, e, blocks, doubles)
            if found is not None and not (positive_only and found[0] <= 0):
                lo, hi, ilo, ihi, total = found
                _column(out, xs, a, e, lo, hi, ilo, ihi, total, count, means)
                continue
        chunk = ys[a:e]
        lo, hi = min(chunk), max(chunk)
        if means:
            total = sum(chunk)
            bad = math.isnan(total) or math.isinf(total)
        else:  # min/max skip a NaN after the first element; an inf or a leading NaN shows in them
            total = 0.0
            bad = math.isnan(lo) or math.isnan(hi) or math.isinf(lo) or math.isinf(hi)
        if bad or (positive_only and lo <= 0):
            good = finite(chunk)
            if positive_only:
                good = [v for v in good if v > 0]
            if not good:
                continue
            lo, hi, total, count = min(good), max(good), sum(good), len(good)
        if doubles:
            raw = chunk.tobytes()  # type: ignore[attr-defined]
            ilo, ihi = _first_at(raw, lo), _first_at(raw, hi)
        else:
            ilo, ihi = _index(chunk, lo), _index(chunk, hi)
        _column(out, xs, a, e, lo, hi, ilo, ihi, total, count, means)
    out.pairs = True
    return out


def _column(
    out: Buckets,
    xs: Sequence[float],
    a: int,
    e: int,
    lo: float,
    hi: float,
    ilo: int,
    ihi: int,
    total: float,
    count: int,
    means: bool,
) -> None:
    """Slots a..e-1 as a column: its min and max in order of occurrence, its mean (of `count`
    values: the finite ones, when there are others)."""
    first, second = (lo, hi) if ilo <= ihi else (hi, lo)
    out.env_x += [xs[a + min(ilo, ihi)], xs[a + max(ilo, ihi)]]
    out.env_y += [first, second]
    if means:
        out.mean_x.append(xs[a + (e - a) // 2])
        out.mean_y.append(total / count)
    out.counts.append(count)


def _from_blocks(
    ys: Sequence[float], a: int, e: int, blocks: Blocks, doubles: bool
) -> tuple[float, float, int, int, float] | None:
    """Slots a..e-1 read from the whole blocks inside them and the points before and after
    those: (min, max, where each first occurs from a, sum), or None when a block or an edge
    point is NaN or infinite, or no whole block lies inside (then the points decide)."""
    size = blocks.size
    fa, fe = -(-a // size), e // size
    if fe <= fa or fe > len(blocks.lo) or not all(blocks.clean[fa:fe]):
        return None
    los, his = blocks.lo[fa:fe], blocks.hi[fa:fe]
    lo, hi = min(los), max(his)
    ilo = blocks.at_lo[fa + los.index(lo)] - a
    ihi = blocks.at_hi[fa + his.index(hi)] - a
    total = sum(blocks.total[fa:fe])
    # The edges: before the first block (earlier, so it wins a tie), after the last (loses one).
    for start, stop, before in ((a, fa * size, True), (fe * size, e, False)):
        if start >= stop:
            continue
        edge = ys[start:stop].tolist() if doubles else list(ys[start:stop])  # type: ignore[attr-defined]
        part = sum(edge)
        if math.isnan(part) or math.isinf(part):
            return None
        total += part
        elo, ehi = min(edge), max(edge)
        if elo < lo or (before and elo == lo):
            lo, ilo = elo, start - a + edge.index(elo)
        if ehi > hi or (before and ehi == hi):
            hi, ihi = ehi, start - a + edge.index(ehi)
    return lo, hi, ilo, ihi, total


def drawn_envelope(b: Buckets) -> tuple[list[float], list[float]]:
    """The envelope in the order its line is drawn: each column's min and max joined to the
    column before through the nearer of the two. On screen the same band as their order of
    occurrence (a column's pair is one vertical stroke either way), but no stroke crosses the
    band from one column to the next: plotext rasterises half the dots of a noisy series (a
    full-height one: 9,295 -> 4,841), and a smooth series, whose nearer value is the one
    that came first, is drawn exactly as before."""
    xs, ys = b.env_x, b.env_y
    if not b.pairs or len(ys) < 4:
        return xs, ys
    xs, ys = list(xs), list(ys)
    for i in range(2, len(ys) - 1, 2):
        last = ys[i - 1]
        if abs(ys[i + 1] - last) < abs(ys[i] - last):
            xs[i], xs[i + 1] = xs[i + 1], xs[i]
            ys[i], ys[i + 1] = ys[i + 1], ys[i]
    return xs, ys


_DOUBLE = struct.Struct("d").pack


def _first_at(raw: bytes, value: float) -> int:
    """The index of the first double in `raw` with `value`'s bits (0 if none), as `index` finds
    a slice's min or max: min/max return the first of equal elements, so no earlier one equals it."""
    needle = _DOUBLE(value)
    at = raw.find(needle)
    while at > 0 and at % 8:  # a match across two doubles: look on
        at = raw.find(needle, at + 1)
    return at // 8 if at > 0 else 0


@dataclass
class Band:
    """Every rank of a metric per screen column: the lowest and highest value any rank had there
    and the mean of all their points (`counts`: points per column)."""

    xs: list[float] = field(default_factory=list)
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


def rank_band(
    traces: Sequence[Trace], columns: int, positive_only: bool = False, points: RankPoints | None = None
) -> Band:
    """All ranks reduced to one `Band`: each rank's points are cut at the columns' x bounds
    (bisect: steps only grow within a trace, as the chart's traces are one attempt each) and
    reduced with C-level min/max/sum per slice, so 256 ranks cost ~columns x 256 slices.

    With `points` (a chart's, kept between its redraws), the ranks that log the same steps are
    folded across ranks per point first, only the new points each time (`RankPoints`): a
    redraw then cuts one folded series instead of every rank's."""
    out = Band()
    columns = max(1, columns)
    xs = [x for t in traces if len(t.xs) and len(t.ys) for x in (t.xs[0], t.xs[-1])]
    if not xs:
        return out
    lo, hi = min(xs), max(xs)
    span = hi - lo
    bounds = [lo + span * c / columns for c in range(1, columns)]
    low = [math.inf] * columns
    high = [-math.inf] * columns
    total = [0.0] * columns
    count = [0] * columns
    rest = traces
    if points is not None and not positive_only:
        group, shared = points.shared(traces)
        if group and points.fold(group, shared):
            points.reduce(group, bounds, low, high, total, count)
            folded = {id(t) for t in group}
            rest = [t for t in traces if id(t) not in folded]
    for t in rest:
        n = min(len(t.xs), len(t.ys))
        if not n:
            continue
        if n > 1 and any(map(gt, t.xs[:n], t.xs[1:n])):
            # x going back (a wall clock that jumped): each point to its own column, one by one
            for x, y in zip(t.xs[:n], t.ys[:n], strict=True):
                if math.isfinite(y) and (y > 0 or not positive_only):
                    c = bisect_right(bounds, x)
                    low[c] = min(low[c], y)
                    high[c] = max(high[c], y)
                    total[c] += y
                    count[c] += 1
            continue
        cuts = [bisect_left(t.xs, x, 0, n) for x in bounds]
        chunks = list(map(t.ys.__getitem__, map(slice, (0, *cuts), (*cuts, n))))
        sums = list(map(sum, chunks))
        if not positive_only and math.isfinite(sum(sums)):
            # the usual trace (finite values): column-wise in C-level maps, over the columns it
            # has points in (all of them, unless it started late: a relaunch, a rank that joined)
            if all(chunks):
                low = list(map(min, low, map(min, chunks)))
                high = list(map(max, high, map(max, chunks)))
                total = list(map(add, total, sums))
                count = list(map(add, count, map(len, chunks)))
                continue
            for c in compress(range(columns), chunks):
                chunk = chunks[c]
                low[c] = min(low[c], min(chunk))
                high[c] = max(high[c], max(chunk))
                total[c] += sums[c]
                count[c] += len(chunk)
            continue
        for c, chunk in enumerate(chunks):
            good = [v for v in finite(chunk) if v > 0 or not positive_only]
            if good:
                low[c] = min(low[c], min(good))
                high[c] = max(high[c], max(good))
                total[c] += sum(good)
                count[c] += len(good)
    width = span / columns
    for c in range(columns):
        if count[c]:
            out.xs.append(lo + (c + 0.5) * width)
            out.low.append(low[c])
            out.high.append(high[c])
            out.mean.append(total[c] / count[c])
            out.counts.append(count[c])
    return out


def band_outliers(traces: Sequence[Trace]) -> list[tuple[str, Trace]]:
    """The ranks a band chart still draws on their own: the highest and the lowest latest value
    (for step time: the slowest and the fastest rank), when they differ."""
    latest = [(t.ys[-1], i) for i, t in enumerate(traces) if len(t.ys) and math.isfinite(t.ys[-1])]
    if len(latest) < 2:
        return []
    (lo, i_lo), (hi, i_hi) = min(latest), max(latest)
    if hi <= lo:
        return []
    return [("highest now", traces[i_hi]), ("lowest now", traces[i_lo])]


def _index(chunk: Sequence[float], value: float) -> int:
    try:
        return chunk.index(value)  # type: ignore[attr-defined]
    except ValueError:
        return 0


def ema(values: Sequence[float], weight: float, counts: Sequence[int] | None = None) -> list[float]:
    """TensorBoard-style debiased EMA. With counts, each value stands for `count` raw points
    (bucket means), and the weight is raised to that power so smoothing does not depend on zoom."""
    if weight <= 0:
        return list(values)
    out: list[float] = []
    acc = 0.0
    norm = 0.0
    for i, v in enumerate(values):
        k = counts[i] if counts else 1
        w = weight**k
        acc = acc * w + (1 - w) * v
        norm = norm * w + (1 - w)
        out.append(acc / norm if norm else v)
    return out
