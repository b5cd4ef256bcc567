"""Where a step's time goes: per-phase shares, data loading share, communication share.

Shares are medians over the recent window divided by the step time: the printed step time when
the log has one, else the sum of the top-level phases (Megatron's `forward` already contains its
`batch generator`; DeepSpeed's `backward` contains `backward_allreduce`, its `step` the optimizer
all-gather), so nested phases are never added twice.
"""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from trainwatch.diagnosis.phases import partition_phases
from trainwatch.diagnosis.window import median, recent_values
from trainwatch.store.series import Series
from trainwatch.store.store import RankKey, Store, key_order

TOP_LEVEL = ("forward", "backward", "allreduce", "optimizer", "step", "forward_backward")
DATA_PHASES = ("batch_generator", "data_loader", "dataloader", "data", "get_batch")
COMM = re.compile(r"all_?reduce|all_?gather|reduce_?scatter|grads_sync|broadcast")
WINDOW = 128


@dataclass(frozen=True)
class Share:
    key: RankKey
    share: float  # 0..1 of the step
    seconds: float  # median seconds per step
    step_s: float  # the step time it is a share of
    what: str  # the phase / metric names it was measured from


def _median_of(store: Store, key: RankKey, kind: str, name: str) -> float:
    return median(recent_values(store.series.get(key.series_key(kind, name)), WINDOW))


def _phase_names(store: Store, key: RankKey) -> list[str]:
    return [name for name in store.series_names(key, "phase") if not name.endswith("_min")]


def step_seconds(store: Store, key: RankKey) -> float:
    """The step time a share is relative to: the printed step time or the sum of the top-level
    phases, whichever is larger (Megatron's cross-rank max timers can add up to more than the
    step time of the rank that printed it; a share above 100 % would be a contradiction)."""
    printed = _median_of(store, key, "metric", "step_time_s")
    parts = [_median_of(store, key, "phase", n) for n in TOP_LEVEL if n in _phase_names(store, key)]
    total = sum(p for p in parts if not math.isnan(p))
    step = max(printed if not math.isnan(printed) else 0.0, total)
    return step if step > 0 else math.nan


def _keys(store: Store) -> list[RankKey]:
    return sorted(store.owners(), key=key_order)


def phase_shares(store: Store) -> dict[str, float]:
    """Median share of the step per phase, for the rank reporting the most phases."""
    with store.lock:
        best: tuple[int, RankKey] | None = None
        for key in _keys(store):
            n = len(_phase_names(store, key))
            if n and (best is None or n > best[0]):
                best = (n, key)
        if best is None:
            return {}
        key = best[1]
        step = step_seconds(store, key)
        if math.isnan(step):
            return {}
        out: dict[str, float] = {}
        for name in _phase_names(store, key):
            if name.endswith("_microstep"):
                continue  # DeepSpeed prints the same numbers again per micro-step
            value = _median_of(store, key, "phase", name)
            if not math.isnan(value):
                out[name] = min(1.0, value / step)
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def data_shares(store: Store) -> list[Share]:
    """Per rank: the share of the step spent waiting for data."""
    with store.lock:
        out: list[Share] = []
        for key in _keys(store):
            step = step_seconds(store, key)
            if math.isnan(step):
                continue
            data = _median_of(store, key, "metric", "data_time_s")
            what = "data_time_s"
            if math.isnan(data):
                names = set(_phase_names(store, key))
                found = [(n, _median_of(store, key, "phase", n)) for n in DATA_PHASES if n in names]
                found = [(n, v) for n, v in found if not math.isnan(v)]
                if not found:
                    continue
                what, data = max(found, key=lambda nv: nv[1])
            out.append(Share(key, min(1.0, data / step), data, step, what))
        return out


def comm_shares(store: Store) -> list[Share]:
    """Per rank: the share of the step in collectives (all-reduce, all-gather, reduce-scatter)."""
    with store.lock:
        out: list[Share] = []
        for key in _keys(store):
            names = [n for n in _phase_names(store, key) if COMM.search(n) and not n.endswith("_microstep")]
            if not names:
                continue
            step = step_seconds(store, key)
            if math.isnan(step):
                continue
            values = [_median_of(store, key, "phase", n) for n in names]
            seconds = sum(v for v in values if not math.isnan(v))
            out.append(Share(key, min(1.0, seconds / step), seconds, step, "+".join(names)))
        return out


# ------------------------------------------------------------------- trend over the run
OTHER_MIN_SHARE = 0.02


def other_seconds(step_s: float | None, phases_s: float) -> float:
    """The part of the printed step time that no printed phase covers (data wait, logging,
    host sync...). The one definition every view uses; under 2% of the step it is timer noise: 0."""
    if step_s is None or not math.isfinite(step_s) or step_s <= 0:
        return 0.0
    rest = step_s - phases_s
    return rest if rest > OTHER_MIN_SHARE * step_s else 0.0


def logging_interval(steps: Sequence[float]) -> float:
    """The median gap between logged steps (a log printing every 5 steps: 5); 1 when unknown."""
    gaps = [b - a for a, b in itertools.pairwise(steps) if b > a]
    return max(1.0, median(gaps)) if gaps else 1.0


def _nearest(steps: Sequence[float], values: Sequence[float], at: float) -> float:
    """The finite value logged at the step closest to `at` (nan if none)."""
    i = bisect_left(steps, at)
    best, dist = math.nan, math.inf
    for j in (i - 1, i):
        if 0 <= j < len(steps) and math.isfinite(values[j]) and abs(steps[j] - at) < dist:
            best, dist = values[j], abs(steps[j] - at)
    return best


@dataclass(frozen=True)
class TrendBucket:
    first_step: float
    last_step: float
    seconds: dict[str, float]  # partition phase (and "other") -> median seconds in the bucket

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


def _ordered(series: Series) -> tuple[Sequence[float], Sequence[float]]:
    """Points sorted by step (a restarted run repeats steps; most logs are already in order).
    Points whose step the log did not say (NaN) have no place on a step axis and are left out."""
    steps, values = series.steps, series.values
    if math.isfinite(sum(steps)) and list(steps) == sorted(steps):
        return steps, values
    pairs = sorted((s, v) for s, v in zip(steps, values, strict=False) if math.isfinite(s))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _bucket_median(steps: Sequence[float], values: Sequence[float], lo: float, hi: float, last: bool) -> float:
    a = bisect_left(steps, lo)
    b = bisect_right(steps, hi) if last else bisect_left(steps, hi)
    good = [v for v in values[a:b] if math.isfinite(v)]
    return median(good) if good else math.nan


def phase_trend(store: Store, key: RankKey, buckets: int) -> tuple[list[str], list[TrendBucket | None]]:
    """The run cut into at most `buckets` equal step ranges, none narrower than the logging
    interval (a log printing phases every 5 steps gets 5-step ranges at the least, never empty
    ranges in between); per range, each partition phase's median seconds, plus `other`
    (other_seconds: the printed step time minus the phases) when the log prints a step time.
    A log that prints its step time less often than its phases (open_clip every 100 steps,
    DeepSpeed timers every step) uses the printed step time nearest the range.
    Ranges without phase records are None. Returns (phase names, buckets)."""
    with store.lock:
        names = partition_phases(_phase_names(store, key))
        points = {}
        for name in names:
            s = store.series.get(key.series_key("phase", name))
            ordered = _ordered(s) if s is not None and len(s) else None
            if ordered is not None and len(ordered[0]):
                points[name] = ordered
        st = store.series.get(key.series_key("metric", "step_time_s"))
        step_pts = _ordered(st) if st is not None and len(st) else None
        if step_pts is not None and not len(step_pts[0]):
            step_pts = None
    if not points:
        return [], []
    lo = min(p[0][0] for p in points.values())
    hi = max(p[0][-1] for p in points.values())
    interval = logging_interval(max(points.values(), key=lambda p: len(p[0]))[0])
    n = max(1, min(buckets, int((hi - lo) / interval + 1e-9)))
    width = (hi - lo) / n if hi > lo else 1.0
    nudge = 1e-9 * max(1.0, width)  # a step logged exactly on a boundary opens the next range
    out: list[TrendBucket | None] = []
    for b in range(n):
        a_step = lo + b * width - (nudge if b else 0.0)
        b_step = hi if b == n - 1 else lo + (b + 1) * width - nudge
        last = b == n - 1
        seconds = {}
        for name, (steps, values) in points.items():
            v = _bucket_median(steps, values, a_step, b_step, last)
            if not math.isnan(v):
                seconds[name] = max(0.0, v)
        if not seconds:
            out.append(None)
            continue
        if step_pts is not None:
            step_s = _bucket_median(step_pts[0], step_pts[1], a_step, b_step, last)
            if math.isnan(step_s):
                step_s = _nearest(step_pts[0], step_pts[1], (a_step + b_step) / 2)
            rest = other_seconds(step_s, sum(seconds.values()))
            if rest > 0:
                seconds["other"] = rest
        out.append(TrendBucket(a_step, b_step, seconds))
    return names, out


def phase_keys(store: Store) -> list[RankKey]:
    """Every (source, rank) with per-phase timings, in rank order."""
    return sorted(store.owners("phase"), key=key_order)
