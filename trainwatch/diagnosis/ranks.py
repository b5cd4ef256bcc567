"""Which rank is slow, which rank stopped, and which rank failed first.

In synchronous data-parallel training every rank prints the same step time: the fast ranks wait
for the slow one inside the collectives. The straggler shows in the time it spends *outside*
them: its data loading, its forward/backward compute, Megatron's (min, max) spread across ranks.
Step times are compared too, for ranks that are not synchronised (separate jobs, pipelines).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainwatch.diagnosis.cadence import cadences
from trainwatch.diagnosis.cause import Cause
from trainwatch.diagnosis.events import event_index, root_cause_pick
from trainwatch.diagnosis.segments import superseded
from trainwatch.diagnosis.status import lagging_ranks, rank_name
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.diagnosis.window import median, median_without, quantile, recent_values
from trainwatch.store.store import Store

# A rank stream: (node, rank). The node is None unless the log names it; two nodes' local
# rank 0 are two streams to compare, not one.
Who = tuple[str | None, int]

SLOWER = 1.25  # a rank this much slower than the median of the others is a straggler
SLOWER_P95 = 1.5  # ... or this much slower in its tail (intermittent stalls)
MIN_POINTS = 3
ABS_FLOOR_S = 0.005  # differences below 5 ms (or 2% of a step) are noise, not a straggler
STEP_FRACTION_FLOOR = 0.02

# What a rank does outside the collectives, most telling first.
COMPUTE_PHASES = (
    "forward",
    "backward_inner",
    "backward",
    "forward_backward",
    "forward_microstep",
    "backward_inner_microstep",
    "backward_microstep",
)
QUANTITIES: tuple[tuple[str, str, str], ...] = (
    ("metric", "data_time_s", "data loading"),
    *(("phase", name, name.replace("_", " ")) for name in COMPUTE_PHASES),
    ("metric", "step_time_s", "step time"),
)


@dataclass(frozen=True)
class Straggler:
    rank: int
    what: str  # "data loading", "forward", "step time", "stopped"
    value: float  # the rank's median (seconds) or its last step ("stopped")
    others: float  # median of the other ranks
    ratio: float
    message: str
    host: str | None = None  # the node, when the log names it


@dataclass(frozen=True)
class Spread:
    """Megatron (min, max) across ranks: someone is slow, the log does not say who."""

    phase: str
    max_s: float
    min_s: float
    message: str


def _per_rank(store: Store, kind: str, name: str) -> dict[Who, list[float]]:
    out: dict[Who, list[float]] = {}
    for key, series in store.series_for(name, kind).items():
        if key.rank is None or superseded(store, key):
            continue
        values = recent_values(series, 256)
        if len(values) < MIN_POINTS:
            # Frameworks log every 10-50 iterations (mmengine's default is 50): early in a run
            # a rank has only a few records, and dropping the warm-up ones leaves too few. A
            # gap that is there from the first record is a straggler too; the median keeps one
            # warm-up outlier from deciding it.
            values = recent_values(series, 256, skip_warmup=False)
        if len(values) >= MIN_POINTS:
            out.setdefault((key.host, key.rank), []).extend(values)
    return out


def _run_step_time(store: Store) -> float:
    """The median rank's median step time (once per store version: the stragglers and the spreads
    of a judgement both ask, 256 ranks' windows each)."""

    def compute() -> float:
        meds = [median(v) for v in _per_rank(store, "metric", "step_time_s").values()]
        return median(meds) if meds else float("nan")

    return store.derived("run_step_time", compute)


def stragglers(store: Store) -> list[Straggler]:
    """Ranks measurably slower than the others; empty when fewer than two ranks report."""
    with store.lock:
        step = _run_step_time(store)
        floor = max(ABS_FLOOR_S, STEP_FRACTION_FLOOR * step) if step == step else ABS_FLOOR_S
        found: dict[Who, Straggler] = {}
        for kind, name, label in QUANTITIES:
            per_rank = _per_rank(store, kind, name)
            if len(per_rank) < 2:
                continue
            meds = {r: median(v) for r, v in per_rank.items()}
            p95s = {r: quantile(v, 0.95) for r, v in per_rank.items()}
            # Each rank against the median of the others: one sort, then one removal per rank
            # (a sort per rank was most of a judgement's own work at 256 ranks). NaN has no place
            # in a sorted list: then the others are sorted for each rank, as they always were.
            by_med, by_p95 = sorted(meds.values()), sorted(p95s.values())
            ordered = not any(map(math.isnan, by_med)) and not any(map(math.isnan, by_p95))
            for who, med in meds.items():
                if who in found:
                    continue
                if ordered:
                    others, others95 = median_without(by_med, med), median_without(by_p95, p95s[who])
                else:
                    others = median([m for r, m in meds.items() if r != who])
                    others95 = median([p for r, p in p95s.items() if r != who])
                slow_med = others > 0 and med >= SLOWER * others and med - others >= floor
                slow_tail = others95 > 0 and p95s[who] >= SLOWER_P95 * others95 and p95s[who] - others95 >= floor
                if not (slow_med or slow_tail):
                    continue
                if slow_med:
                    ratio, value, ref = med / others, med, others
                    evidence = f"{fmt_duration(value)} vs median {fmt_duration(ref)}"
                    message = _slower_message(who, name, label, ratio, evidence)
                else:
                    ratio, value, ref = p95s[who] / others95, p95s[who], others95
                    where = (
                        "has slow steps now and then" if name == "step_time_s" else f"stalls now and then in {label}"
                    )
                    message = (
                        f"{rank_name(who[1], who[0])} {where}: its p95 is {fmt_duration(value)} vs {fmt_duration(ref)} on the "
                        f"median rank (medians {fmt_duration(med)} vs {fmt_duration(others)})"
                    )
                if name != "step_time_s":
                    message += _waited_note(store, who)
                found[who] = Straggler(who[1], label, value, ref, ratio, message, who[0])
        for s in stopped_ranks(store):
            found.setdefault((s.host, s.rank), s)
        return sorted(found.values(), key=lambda s: -s.ratio)


def _slower_message(who: Who, name: str, label: str, ratio: float, evidence: str) -> str:
    """Say "48% longer", but "202x as long" rather than "20100% longer"."""
    if name == "step_time_s":
        how = f"{(ratio - 1) * 100:.0f}% slower than" if ratio < 2 else f"{ratio:.1f}x as slowly as"
        return f"{rank_name(who[1], who[0])} steps {how} the median rank ({evidence})"
    how = f"{(ratio - 1) * 100:.0f}% longer in {label} than" if ratio < 2 else f"{ratio:.0f}x as long in {label} as"
    return f"{rank_name(who[1], who[0])} spends {how} the median rank ({evidence})"


def _waited_note(store: Store, who: Who) -> str:
    """Synchronous training: equal step times are the others waiting for this rank; say so."""
    per_rank = _per_rank(store, "metric", "step_time_s")
    if who not in per_rank or len(per_rank) < 2:
        return ""
    mine = median(per_rank[who])
    others = median([median(v) for r, v in per_rank.items() if r != who])
    if not (others > 0 and abs(mine - others) <= 0.1 * others):
        return ""
    return f"; every rank steps in about {fmt_duration(others)}, so the others wait for it in the gradient allreduce"


def stopped_ranks(store: Store) -> list[Straggler]:
    """Ranks whose last step is several log intervals behind the others'."""
    with store.lock:
        behind = lagging_ranks(store, {k: c for k, c in cadences(store).items() if k.rank is not None})
        out: list[Straggler] = []
        for key, others in behind.items():
            assert key.rank is not None
            step = store.latest_step[key]
            message = (
                f"{rank_name(key.rank, key.host)} stopped advancing at step {step} "
                f"while the other ranks reached {others:.0f}"
            )
            out.append(Straggler(key.rank, "stopped", float(step), others, others / max(step, 1), message, key.host))
        return out


def spreads(store: Store) -> list[Spread]:
    """Megatron phases whose max across ranks is well above their min."""
    with store.lock:
        step = _run_step_time(store)
        floor = max(ABS_FLOOR_S, STEP_FRACTION_FLOOR * step) if step == step else ABS_FLOOR_S
        out: list[Spread] = []
        for key, series in store.series.items():
            if key.kind != "phase" or not key.name.endswith("_min") or superseded(store, key.owner):
                continue
            base = key.name[: -len("_min")]
            high = store.series.get(key._replace(name=base))
            lo = median(recent_values(series, 256))
            hi = median(recent_values(high, 256))
            if lo == lo and hi == hi and lo > 0 and hi >= SLOWER * lo and hi - lo >= floor:
                ratio, what = hi / lo, base.replace("_", " ")
                how = (
                    f"{(ratio - 1) * 100:.0f}% longer in {what} than"
                    if ratio < 2
                    else f"{ratio:.0f}x as long in {what} as"
                )
                message = (
                    f"some rank spends {how} the fastest "
                    f"(max {fmt_duration(hi)} vs min {fmt_duration(lo)} across ranks; the log does not say which rank)"
                )
                out.append(Spread(base, hi, lo, message))
        return sorted(out, key=lambda s: -(s.max_s - s.min_s))


def root_cause(store: Store) -> Cause | None:
    """The rank that failed first and its error, when the log says which rank it was."""
    with store.lock:
        picked = root_cause_pick(store, event_index(store))
    if picked is None:
        return None
    e, evidence = picked
    return Cause(e.rank, e.message.strip(), e.kind, e.source, e.line, e.step, e.host, evidence)
