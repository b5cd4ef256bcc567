"""Every rank side by side (the Ranks tab): its step, pace, throughput, loss, age and errors,
and what explains a straggler."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainwatch.diagnosis.cadence import cadences
from trainwatch.diagnosis.clock import written_at
from trainwatch.diagnosis.window import finite, median, pace_s
from trainwatch.store.store import RankKey, Store, key_order
from trainwatch.ui.data.labels import THROUGHPUT, many_hosts, needs_source, rank_label


def ranks_by_host(store: Store) -> dict[str, list[int]]:
    """Node -> the rank numbers it reported, for logs that name nodes (srun/pdsh labels)."""
    with store.lock:
        keys = set(store.latest) | set(store.latest_phases)
    out: dict[str, set[int]] = {}
    for k in keys:
        if k.host and k.rank is not None:
            out.setdefault(k.host, set()).add(k.rank)
    return {h: sorted(out[h]) for h in sorted(out)}


@dataclass
class RankRow:
    key: RankKey
    label: str
    step: int | None
    step_time_s: float | None  # its pace, as the header's (diagnosis/cadence.Cadence.pace_s)
    throughput: tuple[str, float] | None
    loss: float | None
    written_wall: float | None  # when its source was last written (the one clock: diagnosis/clock.py)
    last_log_time: float | None
    trend: list[float]
    errors: int
    # What explains a straggler in synchronous training (its step time equals everyone's):
    # median seconds per step spent loading data and computing, over the recent window.
    data_s: float | None = None
    compute_s: float | None = None


# Per-rank data time: a printed metric, else this rank's own timer (never a max across ranks).
DATA_SOURCES = (("metric", "data_time_s"), ("phase", "batch_generator"), ("phase", "data_loader"))
# Per-rank compute: forward plus backward without its allreduce when the log splits it.
COMPUTE_SETS = (
    ("forward", "backward_inner"),
    ("forward", "backward"),
    ("forward_microstep", "backward_inner_microstep"),
    ("forward_microstep", "backward_microstep"),
    ("forward_backward",),
)


def _recent_median(store: Store, key: RankKey, kind: str, name: str, window: int) -> float | None:
    """Median of the rank's recent values; None when absent, or when the series is Megatron's
    max across ranks (it has a `_min` companion): that number belongs to no rank in particular."""
    if kind == "phase" and key.series_key("phase", f"{name}_min") in store.series:
        return None
    s = store.series.get(key.series_key(kind, name))
    if s is None:
        return None
    good = finite(s.values[-window:])
    return median(good) if good else None


def _data_s(store: Store, key: RankKey, window: int) -> float | None:
    for kind, name in DATA_SOURCES:
        v = _recent_median(store, key, kind, name, window)
        if v is not None:
            return v
    return None


def _compute_s(store: Store, key: RankKey, window: int) -> float | None:
    for names in COMPUTE_SETS:
        parts = [_recent_median(store, key, "phase", n, window) for n in names]
        if all(p is not None for p in parts):
            return sum(p for p in parts if p is not None)
    return None


def rank_rows(store: Store, trend_points: int = 24, window: int = 20) -> list[RankRow]:
    with store.lock:
        keys = sorted(set(store.latest) | set(store.latest_phases), key=key_order)
        hosts = many_hosts(keys)
        many = needs_source(keys, hosts)
        errors: dict[RankKey, int] = {}
        for ev in store.events:
            if ev.severity == "error":
                rk = RankKey(ev.source, ev.rank, ev.host)
                errors[rk] = errors.get(rk, 0) + 1
        paces = cadences(store)
        rows = []
        for key in keys:
            latest = store.latest.get(key, {})
            c = paces.get(key)  # (a stream of an earlier attempt has none: its printed step times)
            pace = c.pace_s if c is not None else pace_s(store.series.get(key.series_key("metric", "step_time_s")))
            thr = next(((n, latest[n]) for n in THROUGHPUT if n in latest), None)
            st = store.series.get(key.series_key("metric", "step_time_s"))
            if st is None:
                st = store.series.get(key.series_key("metric", "loss"))
            rows.append(
                RankRow(
                    key,
                    rank_label(key, many, hosts),
                    store.latest_step.get(key),
                    None if math.isnan(pace) else pace,
                    thr,
                    latest.get("loss"),
                    written_at(store.sources.get(key.source)),
                    store.last_log_time.get(key),
                    list(st.values[-trend_points:]) if st is not None else [],
                    errors.get(key, 0),
                    _data_s(store, key, window),
                    _compute_s(store, key, window),
                )
            )
    return rows
