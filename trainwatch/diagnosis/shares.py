"""Where a step's time goes: per-phase shares, data loading share, communication share.

Shares are medians over the recent window divided by the step time: the printed step time when
the log has one, else the sum of the top-level phases (Megatron's `forward` already contains its
`batch generator`; DeepSpeed's `backward` contains `backward_allreduce`, its `step` the optimizer
all-gather), so nested phases are never added twice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from trainwatch.diagnosis.window import median, recent_values
from trainwatch.records import Profile
from trainwatch.store.store import RankKey, SeriesKey, Store

TOP_LEVEL = ("forward", "backward", "allreduce", "optimizer", "step", "forward_backward")
DATA_PHASES = ("batch_generator", "data_loader", "dataloader", "data", "get_batch")
COMM = re.compile(r"all_?reduce|all_?gather|reduce_?scatter|grads_sync|broadcast")
PROFILE_DATA = re.compile(
    r"train_dataloader_next|get_train_batch|fetch_next_train_batch|enumerate\(DataLoader\)|DataLoader.*__next__",
    re.I,
)
WINDOW = 128


# Timers that are part of another timer (DeepSpeed: `backward` = inner + allreduce, its `step`
# includes the optimizer timers; Megatron: `optimizer` includes them when both print).
_CHILDREN_OF: dict[str, tuple[str, ...]] = {
    "backward_inner": ("backward",),
    "backward_allreduce": ("backward",),
    "optimizer_gradients": ("step", "optimizer"),
    "optimizer_step": ("step", "optimizer"),
    "optimizer_allgather": ("step", "optimizer"),
    "batch_generator": ("forward",),
}


def phase_parent(name: str, present: set[str] | dict[str, float]) -> str | None:
    """The printed timer that contains `name`, if the log printed it too."""
    for parent in _CHILDREN_OF.get(name, ()):
        if parent in present:
            return parent
    return None


def phase_tree(shares: dict[str, float]) -> list[tuple[str, float, int]]:
    """(name, share, depth) with each nested timer listed right under its parent."""
    roots = [n for n in shares if phase_parent(n, shares) is None]
    out: list[tuple[str, float, int]] = []
    for root in sorted(roots, key=lambda n: -shares[n]):
        out.append((root, shares[root], 0))
        kids = [n for n in shares if phase_parent(n, shares) == root]
        out.extend((kid, shares[kid], 1) for kid in sorted(kids, key=lambda n: -shares[n]))
    return out


@dataclass(frozen=True)
class Share:
    key: RankKey
    share: float  # 0..1 of the step
    seconds: float  # median seconds per step
    step_s: float  # the step time it is a share of
    what: str  # the phase / metric names it was measured from


def _median_of(store: Store, key: RankKey, kind: str, name: str) -> float:
    return median(recent_values(store.series.get(SeriesKey(key.source, key.rank, kind, name)), WINDOW))


def _phase_names(store: Store, key: RankKey) -> list[str]:
    return [
        k.name
        for k in store.series
        if k.kind == "phase" and k.source == key.source and k.rank == key.rank and not k.name.endswith("_min")
    ]


def step_seconds(store: Store, key: RankKey) -> float:
    """The step time a share is relative to: printed, else the sum of top-level phases."""
    printed = _median_of(store, key, "metric", "step_time_s")
    if not math.isnan(printed) and printed > 0:
        return printed
    parts = [_median_of(store, key, "phase", n) for n in TOP_LEVEL if n in _phase_names(store, key)]
    total = sum(p for p in parts if not math.isnan(p))
    return total if total > 0 else math.nan


def _keys(store: Store) -> list[RankKey]:
    keys = {RankKey(k.source, k.rank) for k in store.series}
    return sorted(keys, key=lambda k: (k.source, -1 if k.rank is None else k.rank))


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
                out[name] = value / step
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
            out.append(Share(key, data / step, data, step, what))
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
            out.append(Share(key, seconds / step, seconds, step, "+".join(names)))
        return out


def profile_data_share(store: Store) -> tuple[Profile, str, float] | None:
    """From the newest profiler table: (profile, row name, share) of its data-loading row."""
    with store.lock:
        profiles = list(store.profiles)
    for profile in reversed(profiles):
        best: tuple[str, float] | None = None
        for row in profile.rows:
            name = str(row.get("name", ""))
            if not PROFILE_DATA.search(name):
                continue
            pct = row.get("percentage_pct", row.get("cpu_total_pct"))
            if isinstance(pct, (int, float)) and not math.isnan(pct) and (best is None or pct > best[1] * 100):
                best = (name, float(pct) / 100.0)
        if best is not None:
            return profile, best[0], best[1]
    return None
