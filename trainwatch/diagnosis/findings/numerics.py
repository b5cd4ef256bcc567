"""The numbers went wrong: NaN/inf, loss spikes against the run's own baseline, overflow storms
(fp16's initial loss-scale search is calibration, not a storm)."""

from __future__ import annotations

import math
from bisect import bisect_left, insort

from trainwatch.diagnosis.events import EventIndex
from trainwatch.diagnosis.findings.finding import Finding, ranks_of, ranks_text
from trainwatch.diagnosis.units import fmt_value
from trainwatch.diagnosis.window import RECENT, mad, median_sorted, recent
from trainwatch.store.store import RankKey, SeriesKey, Store

SPIKE_WINDOW = 32  # steps before a point that form its baseline
SPIKE_MIN_BASE = 8  # fewer points before it are no baseline
SPIKE_Z = 8.0  # robust z-score (MADs) a loss jump must exceed
SPIKE_MIN_REL = 0.10  # ... and at least this fraction of the baseline (a flat loss has a tiny MAD)
STORM_STEPS = 100
STORM_COUNT = 10
INITIAL_SCALE_SEARCH = 2.0**20  # DeepSpeed starts at 2^32 and halves down: that is calibration
SCALE_FLOOR = 1.0
CALIBRATION_SKIPS = 32  # the initial search skips at most log2(2^32) steps
SKIPPED_SHARE = 0.05  # ... beyond that, this share of all steps skipped is a storm
AT_FLOOR_COUNT = 3  # overflows at the minimum scale: even unscaled gradients overflow


def nan_finding(index: EventIndex) -> Finding | None:
    e = index.first_nan
    if e is None:
        return None
    metric = str(e.data.get("metric", "loss")) if e.data else "loss"
    where = f" (rank {e.rank})" if e.rank is not None else ""
    more = f"; {index.nan_count} NaN/inf values in all" if index.nan_count > 1 else ""
    at = f"at step {e.step}" if e.step is not None else f"at line {e.line}"  # (before the first numbered step)
    message = f"{metric} first became NaN/inf {at}{where}{more}"
    remedy = (
        "lower the learning rate or lengthen warm-up, clip gradients, prefer bf16 over fp16, and inspect the "
        "batch at that step"
    )
    ranks = (e.rank,) if e.rank is not None else ()
    steps = (e.step,) if e.step is not None else ()
    return Finding("nan", "error", ranks, steps, message, remedy)


Verdict = tuple[float, float] | None  # a point's (z, baseline median) if it is a spike


class SpikeMemo:
    """The loss-spike verdicts of the last look at each loss series. The dashboard looks every
    second or so and a series gains a few points in between: a point with a full baseline
    before it keeps its verdict (the same values give the same one), so only the new points
    and the first SPIKE_WINDOW of the window are judged again (256 ranks: ~30 points each
    instead of 544)."""

    def __init__(self) -> None:
        self.last: dict[SeriesKey, tuple[list[float], list[float], list[Verdict]]] = {}


def _spike_verdicts(
    steps: list[float], values: list[float], old: tuple[list[float], list[float], list[Verdict]] | None
) -> list[Verdict]:
    """Per point of the window: spike or not, against the median/MAD of the SPIKE_WINDOW points
    before it (at least SPIKE_MIN_BASE); `old`: the same series' previous window and verdicts."""
    n = len(values)
    out: list[Verdict] = [None] * n
    reused_to = SPIKE_WINDOW  # points [SPIKE_WINDOW, reused_to) keep their old verdict
    if old is not None and steps and old[0]:
        old_steps, old_values, old_verdicts = old
        d = bisect_left(old_steps, steps[0])  # the window moved on by d points
        m = len(old_steps) - d
        if 0 <= d < len(old_steps) and m <= n and steps[:m] == old_steps[d:] and values[:m] == old_values[d:]:
            reused_to = max(reused_to, m)
            out[SPIKE_WINDOW:m] = old_verdicts[SPIKE_WINDOW + d :]
    _judge_points(values, SPIKE_MIN_BASE, min(n, SPIKE_WINDOW), out)
    _judge_points(values, reused_to, n, out)
    return out


def _judge_points(values: list[float], lo: int, hi: int, out: list[Verdict]) -> None:
    """Verdicts of points lo..hi-1. The baseline of point i is values[i - SPIKE_WINDOW : i], kept
    sorted as it slides (one insort and one delete per point instead of a sort of the window)."""
    if lo >= hi:
        return
    window = sorted(values[max(0, lo - SPIKE_WINDOW) : lo])
    for i in range(lo, hi):
        med = median_sorted(window)
        jump = values[i] - med
        insort(window, values[i])
        if i >= SPIKE_WINDOW:
            del window[bisect_left(window, values[i - SPIKE_WINDOW])]
        if jump <= SPIKE_MIN_REL * abs(med):
            continue
        spread = mad(values[max(0, i - SPIKE_WINDOW) : i], med)
        z = jump / spread if spread > 0 else math.inf
        if z >= SPIKE_Z:
            out[i] = (z, med)


def loss_spikes(store: Store, memo: SpikeMemo | None = None) -> Finding | None:
    spikes: list[tuple[float, int | None, float, float, float]] = []  # z, rank, step, value, baseline
    keys: list[RankKey] = []
    seen: dict[SeriesKey, tuple[list[float], list[float], list[Verdict]]] = {}
    for key, series in store.series_named("loss"):
        steps, values = recent(series, RECENT + SPIKE_WINDOW)
        verdicts = _spike_verdicts(steps, values, memo.last.get(key) if memo is not None else None)
        seen[key] = (steps, values, verdicts)
        if verdicts.count(None) == len(verdicts):
            continue  # (the usual case, found at C level: 256 ranks' windows each time the store changed)
        found = False
        for i, verdict in enumerate(verdicts):
            if verdict is not None:
                spikes.append((verdict[0], key.rank, steps[i], values[i], verdict[1]))
                found = True
        if found:
            keys.append(key.owner)
    if memo is not None:
        memo.last = seen
    if not spikes:
        return None
    z, _rank, step, value, baseline = max(spikes, key=lambda s: (s[3] - s[4]) / max(abs(s[4]), 1e-12))
    count = len({s[2] for s in spikes})
    ranks = ranks_of(keys)
    who = f" on {ranks_text(list(ranks))}" if ranks else ""
    zt = "far" if math.isinf(z) else f"{z:.0f} MADs"
    message = (
        f"loss jumped to {fmt_value(value)} at step {int(step)}{who}, {zt} above the median {fmt_value(baseline)} "
        f"of the records before it" + (f" ({count} spikes in the recent window)" if count > 1 else "")
    )
    remedy = (
        "isolated spikes usually come from a bad batch or a too-high learning rate: lower the LR or lengthen "
        "warm-up, clip gradients, and inspect the data at those steps"
    )
    return Finding("loss_spike", "warning", ranks, tuple(sorted({int(s[2]) for s in spikes})[:20]), message, remedy)


def _skipped_share(store: Store) -> tuple[int, int] | None:
    """(skipped, steps) from DeepSpeed's cumulative `step=N, skipped=K` when far beyond calibration."""
    worst: tuple[int, int] | None = None
    for _key, series in store.series_named("skipped"):
        if not len(series):
            continue
        skipped, step = series.values[-1], series.steps[-1]
        if not (math.isfinite(skipped) and step > 0):
            continue
        excess = skipped - CALIBRATION_SKIPS
        if excess >= STORM_COUNT and excess / step >= SKIPPED_SHARE and (worst is None or skipped > worst[0]):
            worst = (int(skipped), int(step))
    return worst


def overflow_storm(store: Store, index: EventIndex, last_step: int | None) -> Finding | None:
    recent_overflows = []
    if last_step is not None:
        for e in index.overflows:
            attempted = e.data.get("attempted_scale") if e.data else None
            if isinstance(attempted, (int, float)) and attempted >= INITIAL_SCALE_SEARCH:
                continue
            if e.step is not None and e.step > last_step - STORM_STEPS:
                recent_overflows.append(e)
    low_scale: tuple[RankKey, float, float] | None = None
    for key, series in store.series_named("loss_scale"):
        if len(series) > 1:
            first, last = series.values[0], series.values[-1]
            if last <= SCALE_FLOOR < first:
                low_scale = (key.owner, first, last)
    skipped = _skipped_share(store)
    at_floor = [
        e
        for e in index.overflows
        if isinstance(e.data.get("attempted_scale"), (int, float)) and e.data["attempted_scale"] <= SCALE_FLOOR
    ]
    if len(at_floor) < AT_FLOOR_COUNT:
        at_floor = []
    if len(recent_overflows) < STORM_COUNT and low_scale is None and skipped is None and not at_floor:
        return None
    parts = []
    if len(recent_overflows) >= STORM_COUNT:
        parts.append(f"{len(recent_overflows)} fp16 overflows (skipped steps) in the last {STORM_STEPS} steps")
    elif at_floor:
        parts.append(f"{len(at_floor)} fp16 overflows at the minimum loss scale {fmt_value(SCALE_FLOOR)}")
        recent_overflows = at_floor
    if skipped is not None:
        parts.append(f"DeepSpeed skipped {skipped[0]} of {skipped[1]} steps for overflows")
    if low_scale is not None:
        parts.append(f"loss scale fell from {fmt_value(low_scale[1])} to {fmt_value(low_scale[2])}")
    ranks = tuple(sorted({e.rank for e in recent_overflows if e.rank is not None}))
    steps = tuple(sorted({e.step for e in recent_overflows if e.step is not None}))
    remedy = (
        "the gradients keep overflowing in fp16: lower the learning rate or clip gradients, look for outliers in "
        "the data, or train in bf16"
    )
    return Finding("overflow_storm", "warning", ranks, steps, "; ".join(parts), remedy)
