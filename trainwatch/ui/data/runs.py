"""What the compare dashboard shows of each run (pure: no Textual): one row per run for the Runs
tab, and one chart trace per run, its ranks grouped under it (their mean per step, and the ranks
themselves on the same x, which the chart draws as the run's band).

Each run keeps its own store; x is the step, or the wall time since that run's own start, or
the tokens/samples it has seen when its log counts them (`COUNTERS`)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from trainwatch.diagnosis.status import run_status
from trainwatch.store.store import Store, key_order
from trainwatch.ui.data.charts import Trace, chart_traces, chart_version

# x axes of the compare charts, in the order `x` cycles through them.
STEP, WALL, SEEN = "step", "wall", "seen"
X_AXES = (STEP, WALL, SEEN)
# Cumulative counters a log may print (first found is used): what "seen" means for that run.
COUNTERS = ("consumed_tokens", "throughput_total_tokens", "tokens_seen", "consumed_samples", "samples_seen")


@dataclass
class RunTrace(Trace):
    """A run on a chart: its ranks' mean per x (the line) and, when it has several ranks, each
    rank on the same x axis (`ranks`, drawn as the run's min/max band)."""

    ranks: list[Trace] = field(default_factory=list)
    slot: int = 0  # the run's place among the runs compared (its colour on every chart)


@dataclass(frozen=True)
class RunRow:
    label: str
    state: str
    last_step: int | None
    total_steps: int | None
    latest_loss: float  # mean over the run's ranks of their last loss; nan if none or not finite
    best_loss: float  # the lowest finite loss any rank reported; nan if none
    pace_s: float  # seconds per step; nan if unknown
    eta_s: float  # seconds left for a running run; nan otherwise
    ranks: int = 1  # how many ranks the run has (that the log shows; at least 1)


def run_row(label: str, store: Store, now: float | None = None) -> RunRow:
    """The Runs tab's row of one run: its verdict, step, losses, pace and ETA."""
    status = run_status(store, now)
    with store.lock:
        losses = [s for _k, s in sorted(store.series_for("loss").items(), key=lambda kv: key_order(kv[0]))]
        latest = [s.values[-1] for s in losses if len(s.values)]
        finite = [min(v for v in s.values if math.isfinite(v)) for s in losses if any(map(math.isfinite, s.values))]
        # ranks with records and ranks the log names as members (as the dashboard's header counts them)
        ranks = store.ranks.union(*(st.ranks_seen for st in store.sources.values()))
    return RunRow(
        label,
        status.state,
        status.progress.step if status.progress.step is not None else status.last_step,
        status.progress.total,
        sum(latest) / len(latest) if latest else math.nan,
        min(finite) if finite else math.nan,
        status.progress.pace_s,
        status.eta_s,
        max(1, len(ranks), len(losses)),
    )


def runs_version(runs: Sequence[tuple[str, Store]], name: str) -> tuple[int, ...]:
    """Changes whenever a point is added to this metric in any run."""
    return tuple(chart_version(store, name) for _label, store in runs)


def run_traces(
    runs: Sequence[tuple[str, Store]], name: str, *, last_n: int | None, x_axis: str
) -> tuple[list[RunTrace], str]:
    """One trace per run that has this metric (its ranks' mean per step, its ranks under it),
    labelled with the run's name. Returns (traces, the x axis used): wall time or tokens/samples
    fall back to steps unless every run with data has them."""
    per_run: list[tuple[int, str, Store, list[Trace], bool]] = []
    for slot, (label, store) in enumerate(runs):
        traces, used_time = chart_traces(store, name, last_n=last_n, wall_time=x_axis == WALL, overlaid=False)
        if any(len(t.xs) for t in traces):
            per_run.append((slot, label, store, traces, used_time))
    if x_axis == WALL and not all(used for *_, used in per_run):
        per_run = [
            (slot, label, store, chart_traces(store, name, last_n=last_n, wall_time=False, overlaid=False)[0], False)
            for slot, label, store, _t, _u in per_run
        ]
        x_axis = STEP
    out: list[RunTrace] = []
    for slot, label, _store, traces, _used in per_run:
        trace = group(label, traces)
        trace.slot = slot
        if x_axis == WALL and len(trace.xs):
            t0 = trace.xs[0]  # the earliest point of any rank (the mean's xs are every rank's, sorted)
            for t in (trace, *trace.ranks):
                t.xs = array("d", (x - t0 for x in t.xs))
        out.append(trace)
    if x_axis == SEEN:
        seen = [seen_by_step(store) for _slot, _label, store, _t, _u in per_run]
        if per_run and all(seen):
            for trace, counts in zip(out, seen, strict=True):
                for t in (trace, *trace.ranks):
                    _keep_x(t, counts.__contains__, counts.__getitem__)
        else:
            x_axis = STEP
    return out, x_axis


def _keep_x(trace: Trace, keep: Callable[[float], bool], new_x: Callable[[float], float]) -> None:
    """In place: the points whose x `keep` accepts, at x `new_x(x)`."""
    kept = [i for i, x in enumerate(trace.xs) if keep(x)]
    trace.xs = array("d", (new_x(trace.xs[i]) for i in kept))
    trace.ys = array("d", (trace.ys[i] for i in kept))
    trace.blocks = None  # (they summarized the points before)


def group(label: str, traces: Sequence[Trace]) -> RunTrace:
    """A run's ranks as one trace: the one rank's series, or the mean of every rank's points at
    each x (in x order) with the ranks kept under it (the chart's own copies: a changed x axis
    replaces their `xs`, the store is never touched)."""
    shown = [t for t in traces if len(t.xs)]
    if len(shown) == 1:
        t = shown[0]
        return RunTrace(label, t.xs, t.ys, t.restart_step, t.blocks)
    sums: dict[float, list[float]] = {}
    for t in shown:
        for x, y in zip(t.xs, t.ys, strict=False):
            acc = sums.setdefault(x, [0.0, 0.0])
            acc[0] += y
            acc[1] += 1
    xs = sorted(sums)
    restarts = [t.restart_step for t in shown if t.restart_step is not None]
    return RunTrace(
        label,
        array("d", xs),
        array("d", (sums[x][0] / sums[x][1] for x in xs)),
        min(restarts) if restarts else None,
        ranks=shown,
    )


def seen_name(store: Store) -> str | None:
    """The first of `COUNTERS` this run's log reports, if any."""
    names = set(store.metric_names())
    return next((n for n in COUNTERS if n in names), None)


def seen_by_step(store: Store) -> dict[float, float]:
    """step -> tokens (or samples) seen by then, from the run's first rank that reports them."""
    name = seen_name(store)
    if name is None:
        return {}
    with store.lock:
        found = store.series_for(name)
        if not found:
            return {}
        s = found[min(found, key=key_order)]
        return dict(zip(s.steps, s.values, strict=False))
