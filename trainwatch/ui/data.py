"""Read what the widgets show out of the store, cheaply (pure: no Textual, no I/O).

Copies are taken under `store.lock`; everything after that works on the copies, so the
ingest thread is never held up by drawing.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import add, gt

from trainwatch.diagnosis.cadence import cadences
from trainwatch.diagnosis.clock import written_at
from trainwatch.diagnosis.phases import partition_phases, phase_order
from trainwatch.diagnosis.window import median, pace_s
from trainwatch.records import Event
from trainwatch.store.series import Series
from trainwatch.store.store import RankKey, Store, key_order

# Throughput metrics, best first. DeepSpeed's timer.py prints only `SamplesPerSec` (a running
# average, stored as running_avg_samples_per_s) in some versions: it is shown under its own name.
THROUGHPUT = (
    "samples_per_s",
    "running_avg_samples_per_s",
    "samples_per_s_per_gpu",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "tflops",
    "mfu_pct",
)
# Charts shown by default, in this order, when the log has them.
DEFAULT_CHARTS = (
    "loss",
    "step_time_s",
    "lr",
    *THROUGHPUT,
    "grad_norm",
    "loss_scale",
    "eval_loss",
    "mem_gib",
    "data_time_s",
)
# Of each family the dashboard charts only the best one the log has (one chart for samples/s).
RATE_FAMILIES = (
    ("samples_per_s", "running_avg_samples_per_s", "samples_per_s_per_gpu"),
    ("tokens_per_s", "tokens_per_s_per_gpu"),
)
TITLES = {
    "loss": "loss",
    "step_time_s": "step time (s)",
    "lr": "learning rate",
    "samples_per_s": "samples/s",
    "running_avg_samples_per_s": "samples/s (running avg)",
    "samples_per_s_per_gpu": "samples/s per GPU",
    "tokens_per_s": "tokens/s",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "tflops": "TFLOP/s per GPU",
    "mfu_pct": "MFU %",
    "grad_norm": "grad norm",
    "loss_scale": "loss scale",
    "eval_loss": "eval loss",
    "mem_gib": "memory (GiB)",
    "max_mem_gib": "peak memory (GiB)",
    "data_time_s": "data time (s)",
}


def title_for(name: str) -> str:
    return TITLES.get(name, name)


def default_charts(present: Iterable[str]) -> list[str]:
    """DEFAULT_CHARTS the log has, keeping only the best metric of each throughput family."""
    have = set(present)
    skip = {m for family in RATE_FAMILIES for m in [n for n in family if n in have][1:]}
    return [m for m in DEFAULT_CHARTS if m in have and m not in skip]


def rank_label(key: RankKey, many_sources: bool, many_hosts: bool = False) -> str:
    rank = "rank ?" if key.rank is None else f"rank {key.rank}"
    if many_hosts and key.host:
        rank = f"{key.host}/{rank}"
    if many_sources:
        return f"{short_source(key.source)}:{rank}"
    return rank


def needs_source(keys: Iterable[RankKey], many_hosts: bool) -> bool:
    """Whether rank labels must name their source: only when two sources would read the same
    (one rank per per-rank file reads `rank 7`, not `…/logs/rank_7.log:rank 7`)."""
    keys = list(keys)
    if len({k.source for k in keys}) < 2:
        return False
    labels = {rank_label(k, False, many_hosts) for k in keys}
    return len(labels) < len(keys) or any(k.rank is None for k in keys)


def short_source(source: str, width: int = 28) -> str:
    """The tail of a path, which is the part that tells sources apart."""
    if len(source) <= width:
        return source
    return "…" + source[-(width - 1) :]


# --------------------------------------------------------------- chart data
@dataclass
class Trace:
    label: str
    xs: array
    ys: array
    # The step this rank's current attempt started at, when its series went back (a relaunch
    # into the same file): the chart shows that attempt only, as the header and ranks do.
    restart_step: float | None = None


RESTART_CHUNK = 4096


def relaunched(store: Store, key: RankKey) -> bool:
    """Whether this rank stream lived through an earlier attempt too: the records say so (their
    `attempt`, kept per stream in `Store.attempt_span`), as they do for the header, `summary`'s
    attempts and the verdict. A step counter that goes back on its own (per-epoch steps) is not
    a relaunch."""
    current = store.key_attempt.get(key, 0)
    return any((n, key) in store.attempt_span for n in range(current))


def restart_index(steps: Sequence[float]) -> int:
    """Where the current attempt begins in a relaunched stream's series (whose points do not
    carry their attempt): after the last step that went back by more than one; 0 when none did.

    Searched from the end in chunks, each checked at C level (`map(gt, ...)`), so a series
    that only goes up costs one C pass and no Python loop per point."""
    end = len(steps)
    while end > 1:
        start = max(0, end - RESTART_CHUNK)
        chunk = steps[start:end]
        if any(map(gt, chunk, chunk[1:])):
            for i in range(len(chunk) - 1, 0, -1):
                if chunk[i] < chunk[i - 1] - 1:
                    return start + i
        end = start + 1  # the next chunk ends with this one's first point: no pair is skipped
    return 0


# Series -> (the series, count, compactions, restart index) when last looked at: new points
# are then all that is searched (a series only grows; compaction moves indices: search again).
_restarts: dict[int, tuple[Series, int, int, int]] = {}


def series_restart(s: Series) -> int:
    """`restart_index(s.steps)`, searching only the points added since the last call."""
    seen = _restarts.get(id(s))
    n = len(s.steps)
    if seen is not None and seen[0] is s and seen[2] == s.compactions and seen[1] <= s.count:
        new = s.count - seen[1]
        if new == 0:
            return seen[3]
        start = max(0, n - new - 1)  # with the last point seen: a step back at the seam counts
        found = restart_index(s.steps[start:])
        index = start + found if found else seen[3]
    else:
        index = restart_index(s.steps)
    if len(_restarts) > 4096:  # series of stores gone (tests, reloads): forget them all
        _restarts.clear()
    _restarts[id(s)] = (s, s.count, s.compactions, index)
    return index


def chart_traces(store: Store, name: str, *, last_n: int | None, wall_time: bool) -> tuple[list[Trace], bool]:
    """Copies of every rank's series for one metric, its current attempt only (`relaunched`).
    Returns (traces, wall_time_used)."""
    with store.lock:
        copies = []
        for drawn in (name, *OVERLAID.get(name, ())):
            found = store.series_for(drawn)
            hosts = _many_hosts(found)
            many = needs_source(found, hosts)
            for key in sorted(found, key=key_order):
                s = found[key]
                cut = series_restart(s) if relaunched(store, key) else 0
                restart = s.steps[cut] if cut else None
                first = max(cut, len(s.steps) - last_n) if last_n else cut
                sl = slice(first, None)
                label = rank_label(key, many, hosts)
                if drawn != name:  # the evaluation loss on the loss chart
                    label = f"{title_for(drawn)} {label}".strip()
                copies.append((label, s.steps[sl], s.values[sl], s.times[sl], restart))
    use_time = wall_time and any(_finite_count(t) >= 2 for _, _, _, t, _ in copies)
    traces: list[Trace] = []
    for label, steps, values, times, restart in copies:
        if use_time:
            keep = [i for i, t in enumerate(times) if not math.isnan(t)]
            xs = array("d", (times[i] for i in keep))
            ys = array("d", (values[i] for i in keep))
        else:
            xs, ys = steps, values
        traces.append(Trace(label, xs, ys, restart))
    return traces, use_time


def _many_hosts(keys: Iterable[RankKey]) -> bool:
    """Name the node in labels only when there are several (local rank numbers repeat per node)."""
    return len({k.host for k in keys if k.host}) > 1


def _finite_count(values: Sequence[float]) -> int:
    return sum(1 for v in values[:64] if not math.isnan(v)) + sum(1 for v in values[-64:] if not math.isnan(v))


# Series drawn on another metric's chart as well as on their own: the evaluation loss beside the training loss.
OVERLAID = {"loss": ("eval_loss",)}


def chart_version(store: Store, name: str) -> int:
    """Changes whenever a point is added to any series drawn on this metric's chart."""
    names = (name, *OVERLAID.get(name, ()))
    with store.lock:
        return sum(s.count for k, s in store.series.items() if k.name in names and k.kind == "metric")


@dataclass
class Buckets:
    """A series reduced to one column per bucket: the min/max envelope and the mean."""

    env_x: list[float] = field(default_factory=list)
    env_y: list[float] = field(default_factory=list)
    mean_x: list[float] = field(default_factory=list)
    mean_y: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


def _finite(chunk: Sequence[float]) -> list[float]:
    return [v for v in chunk if not (math.isnan(v) or math.isinf(v))]


def downsample(xs: Sequence[float], ys: Sequence[float], columns: int, positive_only: bool = False) -> Buckets:
    """Min/max per column (2 points per column, in order of occurrence) plus the bucket mean.

    Works on slices with C-level min/max/sum, so a million points reduce in a few ms:
    plotting cost is then bounded by the terminal width, not by the run length.
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
    width = n / columns
    for b in range(columns):
        a, e = int(b * width), int((b + 1) * width)
        if e <= a:
            continue
        chunk = ys[a:e]
        lo, hi = min(chunk), max(chunk)
        total = sum(chunk)
        count = e - a
        if math.isnan(total) or math.isinf(total) or (positive_only and lo <= 0):
            good = _finite(chunk)
            if positive_only:
                good = [v for v in good if v > 0]
            if not good:
                continue
            lo, hi, total, count = min(good), max(good), sum(good), len(good)
        ilo, ihi = _index(chunk, lo), _index(chunk, hi)
        first, second = (lo, hi) if ilo <= ihi else (hi, lo)
        xa, xb = xs[a + min(ilo, ihi)], xs[a + max(ilo, ihi)]
        out.env_x += [xa, xb]
        out.env_y += [first, second]
        out.mean_x.append(xs[a + (e - a) // 2])
        out.mean_y.append(total / count)
        out.counts.append(count)
    return out


# Charts draw each rank as its own line up to this many ranks; beyond it (a 32-node job's 256
# per-rank files) one line per rank is an unreadable smear that costs plotext seconds: the
# chart shows the ranks as a band instead (`rank_band`) plus the ranks furthest out.
MAX_RANK_LINES = 8


@dataclass
class Band:
    """Every rank of a metric per screen column: the lowest and highest value any rank had there
    and the mean of all their points (`counts`: points per column)."""

    xs: list[float] = field(default_factory=list)
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


def rank_band(traces: Sequence[Trace], columns: int, positive_only: bool = False) -> Band:
    """All ranks reduced to one `Band`: each rank's points are cut at the columns' x bounds
    (bisect: steps only grow within a trace, as the chart's traces are one attempt each) and
    reduced with C-level min/max/sum per slice, so 256 ranks cost ~columns x 256 slices."""
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
    for t in traces:
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
            good = [v for v in _finite(chunk) if v > 0 or not positive_only]
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


# --------------------------------------------------------------- phases
@dataclass
class PhaseRow:
    label: str
    phases: dict[str, float]  # median seconds over the window
    step_time_s: float | None
    steps: int


def phase_rows(store: Store, window: int = 20) -> list[PhaseRow]:
    """Per rank: median seconds per phase of the step's partition over its last `window` records."""
    with store.lock:
        keys = sorted({k.owner for k in store.series if k.kind == "phase"}, key=key_order)
        hosts = _many_hosts(keys)
        many = needs_source(keys, hosts)
        rows = []
        for key in keys:
            source, rank = key.source, key.rank
            names = store.series_names(key, "phase")
            means: dict[str, float] = {}
            steps = 0
            for name in partition_phases(sorted(names, key=phase_order)):
                s = store.get_series(source, rank, name, "phase", key.host)
                if s is None:
                    continue
                vals = _finite(s.values[-window:])
                if vals:
                    means[name] = median(vals)
                    steps = max(steps, len(vals))
            st = store.get_series(source, rank, "step_time_s", host=key.host)
            step_time = None
            if st is not None:
                good = _finite(st.values[-window:])
                step_time = median(good) if good else None
            if means:
                rows.append(PhaseRow(rank_label(key, many, hosts), means, step_time, steps))
    return rows


# --------------------------------------------------------------- ranks
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
    good = _finite(s.values[-window:])
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
        hosts = _many_hosts(keys)
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


def events_copy(store: Store, since: int = 0) -> tuple[list[Event], int]:
    """Events added after the first `since` ever added (by count), and the new count."""
    with store.lock:
        total = sum(store.event_counts.values())
        new = total - since
        if new <= 0:
            return [], total
        evs = list(store.events)[-new:]
    return evs, total
