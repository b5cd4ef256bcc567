"""What a performance engineer would tell the user, most important first, each with its remedy.

Every finding states its evidence in numbers (ranks, steps, seconds, shares). Thresholds are
relative to the run itself (its own medians and spreads) so a healthy run stays silent: warm-up
steps are left out of baselines, single slow steps (eval, checkpoint) do not move a median, and
fp16's initial loss-scale search is not an overflow storm.
"""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_left, insort
from dataclasses import dataclass

from trainwatch.diagnosis.events import EventIndex, event_index, root_cause_event
from trainwatch.diagnosis.overfit import eval_figures
from trainwatch.diagnosis.profile_phases import profile_data_share
from trainwatch.diagnosis.ranks import spreads, stragglers
from trainwatch.diagnosis.shares import comm_shares, data_shares
from trainwatch.diagnosis.status import RunStatus, failure_sentence, rank_name, run_status
from trainwatch.diagnosis.units import fmt_duration, fmt_value
from trainwatch.diagnosis.window import RECENT, mad, median, median_sorted, quantile, recent
from trainwatch.records import Event
from trainwatch.store.store import RankKey, SeriesKey, Store

KINDS = (
    "crash",
    "stall",
    "nan",
    "loss_spike",
    "overflow_storm",
    "straggler",
    "dataloader_bound",
    "comm_bound",
    "slowdown",
    "memory_pressure",
    "overfitting",
)
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

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
DATA_BOUND = 0.30
COMM_BOUND = 0.30
SLOWDOWN = 1.30
SLOWDOWN_MIN_POINTS = 40
MEM_PCT_HIGH = 95.0
MEM_GROWTH = 1.10
MEM_EPOCHS = 4


@dataclass(frozen=True)
class Finding:
    kind: str  # one of KINDS
    severity: str  # error | warning | info
    ranks: tuple[int, ...]
    steps: tuple[int, ...]
    message: str  # one plain sentence with the evidence
    remedy: str = ""  # the usual fix, "" when there is none
    hosts: tuple[str | None, ...] = ()  # the node of each of `ranks`, when the log names nodes

    @property
    def text(self) -> str:
        """Message and remedy as the contract's one sentence."""
        return f"{self.message}: {self.remedy}" if self.remedy else self.message


def _ranks_text(ranks: list[int]) -> str:
    ranks = sorted(set(ranks))
    if not ranks:
        return ""
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _ranks_of(keys: list[RankKey]) -> tuple[int, ...]:
    return tuple(sorted({k.rank for k in keys if k.rank is not None}))


def _who(keys: list[RankKey]) -> tuple[tuple[int, ...], tuple[str | None, ...], str]:
    """Ranks, their nodes and how to name them: `rank 0 on task1` when the log names nodes
    (local rank numbers repeat on every node), else `ranks 0-3`."""
    pairs = sorted({(k.host or "", k.rank) for k in keys if k.rank is not None})
    if not pairs:
        return (), (), ""
    if any(h for h, _ in pairs):
        text = ", ".join(rank_name(r, h or None) for h, r in pairs)
        return tuple(r for _, r in pairs), tuple(h or None for h, _ in pairs), text
    ranks = tuple(sorted({r for _, r in pairs}))
    return ranks, (), _ranks_text(list(ranks))


# ------------------------------------------------------------------- crash / stall
SIGNAL_NAME = re.compile(r"\bSIG[A-Z]+\b")
SIGNAL_NUMBER = re.compile(r"got signal:?\s*(\d+)")
SIGNAL_NUMBERS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 15: "SIGTERM"}


def _signal_of(events: list[Event]) -> str | None:
    for e in events:
        sig = e.data.get("signal") if e.data else None
        if isinstance(sig, str) and sig.startswith("SIG"):
            return sig
        if isinstance(sig, int) and sig in SIGNAL_NUMBERS:
            return SIGNAL_NUMBERS[sig]
        m = SIGNAL_NAME.search(e.message)
        if m:
            return m.group(0)
        n = SIGNAL_NUMBER.search(e.message)
        if n and int(n.group(1)) in SIGNAL_NUMBERS:
            return SIGNAL_NUMBERS[int(n.group(1))]
    return None


EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Interrupt))\b")


def _crash_remedy(cause: Event, failures: list[Event]) -> str:
    kinds = {e.kind for e in failures} | {cause.kind}
    text = " ".join(e.message for e in failures) + " " + cause.message
    if cause.kind == "oom" or "out of memory" in text.lower():
        return (
            "reduce the micro-batch size or sequence length, enable activation checkpointing, or shard more "
            "(ZeRO stage / FSDP); PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps when much memory is "
            "reserved but unallocated"
        )
    if cause.kind == "nccl_timeout":
        return (
            "the rank that never reached the collective usually has the real error in its own log; "
            "NCCL_DEBUG=INFO shows which link failed"
        )
    if "KeyboardInterrupt" in text:
        return "it was interrupted with Ctrl-C; resume from the last checkpoint"
    exc = cause.data.get("exception") if isinstance(cause.data.get("exception"), str) else None
    if exc is None and cause.kind == "crash":
        m = EXCEPTION_NAME.search(cause.message)
        exc = m.group(1) if m else None
    if cause.kind in ("traceback", "crash") and exc and "SignalException" not in exc:
        # A rank raised: the launcher's SIGTERMs to the other ranks are consequences, not causes.
        who = rank_name(cause.rank, cause.host) if cause.rank is not None else "the failing process"
        return (
            f"the {exc} raised by {who} is the error to fix (its traceback is in the log); the launcher then "
            "stopped the other ranks. Resume from the last checkpoint once it is fixed"
        )
    sig = _signal_of([cause, *failures]) if "signal" in kinds or "signal" in text else None
    if sig == "SIGHUP":
        return (
            "the launcher got SIGHUP when its terminal closed, and torchrun installs its own SIGHUP handler so "
            "nohup does not protect it: run under tmux/screen, setsid, or the batch scheduler, then resume from "
            "the last checkpoint"
        )
    if sig in ("SIGTERM", "SIGKILL"):
        return (
            "something outside the job stopped it (scheduler time limit, preemption, the host's OOM killer): "
            "check the scheduler's log and dmesg, then resume from the last checkpoint"
        )
    return ""


def _crash_finding(store: Store, status: RunStatus, index: EventIndex) -> Finding | None:
    if status.state != "crashed" or status.failure is None:
        return None
    cause = status.failure
    failures = [e for e in index.failures if e.line >= 0]
    root = root_cause_event(store, index)
    ranks = (root.rank,) if root is not None and root.rank is not None else ()
    steps = (status.last_step,) if status.last_step is not None else ()
    where = f" after step {status.last_step}" if status.last_step is not None else " before the first step"
    message = f"the run crashed{where}: {failure_sentence(cause)}"
    return Finding("crash", "error", ranks, steps, message, _crash_remedy(cause, failures[-8:]))


def _stall_finding(status: RunStatus) -> Finding | None:
    steps = (status.last_step,) if status.last_step is not None else ()
    if status.state == "stalled":
        hang = status.failure is not None and status.failure.kind == "nccl_timeout"
        remedy = (
            "a hang in a collective usually means one rank died or is stuck: `py-spy dump --pid PID` on every rank "
            "shows where each one waits; TORCH_NCCL_ASYNC_ERROR_HANDLING=1 with a shorter timeout makes it fail "
            "instead of hanging"
            if hang
            else "if the job is still alive, `py-spy dump --pid PID` shows where it waits (data loader, collective, "
            "I/O); if it is gone, the scheduler's log says why"
        )
        ranks = (status.failure.rank,) if status.failure is not None and status.failure.rank is not None else ()
        return Finding("stall", "error", ranks, steps, status.reason, remedy)
    return None


# ------------------------------------------------------------------- numerics
def _nan_finding(index: EventIndex) -> Finding | None:
    e = index.first_nan
    if e is None:
        return None
    metric = str(e.data.get("metric", "loss")) if e.data else "loss"
    where = f" (rank {e.rank})" if e.rank is not None else ""
    more = f"; {index.nan_count} NaN/inf values in all" if index.nan_count > 1 else ""
    message = f"{metric} first became NaN/inf at step {e.step}{where}{more}"
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


def _loss_spikes(store: Store, memo: SpikeMemo | None = None) -> Finding | None:
    spikes: list[tuple[float, int | None, float, float, float]] = []  # z, rank, step, value, baseline
    keys: list[RankKey] = []
    seen: dict[SeriesKey, tuple[list[float], list[float], list[Verdict]]] = {}
    for key, series in store.series.items():
        if key.kind != "metric" or key.name != "loss":
            continue
        steps, values = recent(series, RECENT + SPIKE_WINDOW)
        verdicts = _spike_verdicts(steps, values, memo.last.get(key) if memo is not None else None)
        seen[key] = (steps, values, verdicts)
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
    ranks = _ranks_of(keys)
    who = f" on {_ranks_text(list(ranks))}" if ranks else ""
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
    for key, series in store.series.items():
        if key.kind != "metric" or key.name != "skipped" or not len(series):
            continue
        skipped, step = series.values[-1], series.steps[-1]
        if not (math.isfinite(skipped) and step > 0):
            continue
        excess = skipped - CALIBRATION_SKIPS
        if excess >= STORM_COUNT and excess / step >= SKIPPED_SHARE and (worst is None or skipped > worst[0]):
            worst = (int(skipped), int(step))
    return worst


def _overflow_storm(store: Store, index: EventIndex, last_step: int | None) -> Finding | None:
    recent_overflows = []
    if last_step is not None:
        for e in index.overflows:
            attempted = e.data.get("attempted_scale") if e.data else None
            if isinstance(attempted, (int, float)) and attempted >= INITIAL_SCALE_SEARCH:
                continue
            if e.step is not None and e.step > last_step - STORM_STEPS:
                recent_overflows.append(e)
    low_scale: tuple[RankKey, float, float] | None = None
    for key, series in store.series.items():
        if key.kind == "metric" and key.name == "loss_scale" and len(series) > 1:
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


# ------------------------------------------------------------------- performance
def _straggler_findings(store: Store) -> list[Finding]:
    out: list[Finding] = []
    for s in stragglers(store):
        if s.what == "stopped":
            remedy = "look at its log for an error; the other ranks will block in the next collective"
        elif s.what == "data loading":
            remedy = "check that node's disk or network and its CPU load, and the DataLoader workers on that rank"
        else:
            remedy = (
                "check that GPU's clocks and temperature (nvidia-smi -q -d PERFORMANCE), ECC errors, and other "
                "processes on it or its node"
            )
        out.append(Finding("straggler", "warning", (s.rank,), (), s.message, remedy, (s.host,)))
    if not out:
        for sp in spreads(store)[:1]:
            remedy = (
                "time each rank separately (Megatron --timing-log-level 2, DeepSpeed wall_clock_breakdown) to find "
                "it, then check that GPU's clocks and its node's load"
            )
            out.append(Finding("straggler", "warning", (), (), sp.message, remedy))
    return out


def _is_cross_rank(store: Store, key: RankKey, phase: str) -> bool:
    """A phase from a `(min, max) time across ranks` block has a `<name>_min` companion."""
    return key.series_key("phase", f"{phase}_min") in store.series


_DATA_WHAT = {"data_time_s": "data_time"}  # the metric's name as the log printed it


def _dataloader_finding(store: Store) -> Finding | None:
    shares = [s for s in data_shares(store) if s.share >= DATA_BOUND]
    if shares:
        worst = max(shares, key=lambda s: s.share)
        ranks, hosts, named = _who([s.key for s in shares])
        who = f" on {named}" if named else ""
        if _is_cross_rank(store, worst.key, worst.what):
            # Megatron's `(min, max) time across ranks` timer: the max is the slowest rank's, and
            # the rank that printed it (the last one) says nothing about which rank that is.
            ranks, hosts = (), ()
            who = " on the slowest rank (max across ranks; the log does not say which)"
        message = (
            f"{worst.share * 100:.0f}% of the step is data loading{who} "
            f"({fmt_duration(worst.seconds)} of {fmt_duration(worst.step_s)}, {_DATA_WHAT.get(worst.what, worst.what).replace('_', ' ')})"
        )
    else:
        prof = profile_data_share(list(store.profiles))
        if prof is None or prof[1].share < DATA_BOUND:
            return None
        breakdown, data = prof
        profile = breakdown.profile
        ranks, hosts = ((profile.rank,) if profile.rank is not None else ()), ()
        message = (
            f"{data.share * 100:.0f}% {breakdown.basis} is data loading ({', '.join(data.rows)} in {profile.title})"
        )
    remedy = (
        "raise DataLoader num_workers, enable pin_memory and persistent_workers, or pre-tokenize / cache the "
        "dataset on local disk"
    )
    return Finding("dataloader_bound", "warning", ranks, (), message, remedy, hosts)


def _comm_finding(store: Store) -> Finding | None:
    shares = [s for s in comm_shares(store) if s.share >= COMM_BOUND]
    if not shares:
        return None
    worst = max(shares, key=lambda s: s.share)
    ranks, hosts, named = _who([s.key for s in shares])
    who = f" on {named}" if named else ""
    message = (
        f"{worst.share * 100:.0f}% of the step is communication{who} "
        f"({worst.what.replace('_', ' ').replace('+', ' + ')}: {fmt_duration(worst.seconds)} of "
        f"{fmt_duration(worst.step_s)})"
    )
    remedy = (
        "raise gradient accumulation so each all-reduce serves more samples, overlap communication with compute "
        "(DeepSpeed overlap_comm, Megatron --overlap-grad-reduce), and check that NCCL uses the fast interconnect "
        "(NCCL_DEBUG=INFO)"
    )
    return Finding("comm_bound", "warning", ranks, (), message, remedy, hosts)


def _slowdown_finding(store: Store) -> Finding | None:
    hits: list[tuple[float, RankKey, float, float, float, float]] = []
    for key, series in store.series.items():
        if key.kind != "metric" or key.name not in ("step_time_s", "samples_per_s", "tokens_per_s"):
            continue
        n = len(series)
        if n < SLOWDOWN_MIN_POINTS:
            continue
        lo, hi = int(n * 0.1), max(int(n * 0.3), int(n * 0.1) + 4)
        stride = max(1, (hi - lo) // 512)
        base = [v for v in series.values[lo:hi:stride] if math.isfinite(v) and v > 0]
        tail_n = min(512, max(10, n // 10))
        tail = [v for v in series.values[-tail_n:] if math.isfinite(v) and v > 0]
        if len(base) < 4 or len(tail) < 4:
            continue
        if key.name != "step_time_s":  # throughput: invert so that "bigger" means "slower"
            base = [1.0 / v for v in base]
            tail = [1.0 / v for v in tail]
        b, r = median(base), median(tail)
        if b > 0 and r / b >= SLOWDOWN and quantile(tail, 0.25) >= b * (1 + (SLOWDOWN - 1) / 2):
            hits.append((r / b, key.owner, b, r, series.steps[lo], series.steps[-1]))
    if not hits:
        return None
    ratio, _key, b, r, s0, s1 = max(hits, key=lambda h: h[0])
    ranks = _ranks_of([h[1] for h in hits])
    who = f" on {_ranks_text(list(ranks))}" if ranks else ""
    message = (
        f"step time rose from {fmt_duration(b)} to {fmt_duration(r)} (+{(ratio - 1) * 100:.0f}%) between step "
        f"{int(s0)} and step {int(s1)}{who}"
    )
    remedy = (
        "a step time that keeps growing usually means something accumulates: tensors or metrics kept in Python "
        "lists, a growing cache, memory fragmentation, or thermal throttling; watch nvidia-smi clocks and host "
        "memory, and compare with a restart from the last checkpoint"
    )
    return Finding("slowdown", "warning", ranks, (int(s0), int(s1)), message, remedy)


def _memory_finding(store: Store) -> Finding | None:
    for key, series in store.series.items():
        if key.kind == "metric" and key.name == "mem_pct":
            _steps, values = recent(series, 64)
            if values and median(values) >= MEM_PCT_HIGH:
                rank = (key.rank,) if key.rank is not None else ()
                message = f"device memory is at {median(values):.0f}% of the GPU" + (
                    f" on rank {key.rank}" if key.rank is not None else ""
                )
                remedy = (
                    "the next longer batch may run out of memory: reduce the micro-batch size, enable activation "
                    "checkpointing, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                )
                return Finding("memory_pressure", "warning", rank, (), message, remedy)
    for key, series in store.series.items():
        if key.kind != "metric" or key.name != "mem_gib":
            continue
        epochs = store.series.get(key._replace(kind="metric", name="epoch"))
        if epochs is None or len(epochs) < MEM_EPOCHS:
            continue
        epoch_at = dict(zip(epochs.steps, epochs.values, strict=False))
        per_epoch: dict[int, list[float]] = {}
        for step, value in zip(series.steps, series.values, strict=False):
            ep = epoch_at.get(step)
            if ep is not None and math.isfinite(ep) and math.isfinite(value):
                per_epoch.setdefault(int(ep), []).append(value)
        meds = [median(per_epoch[e]) for e in sorted(per_epoch)]
        if len(meds) >= MEM_EPOCHS and all(b > a for a, b in itertools.pairwise(meds)):
            if meds[-1] >= MEM_GROWTH * meds[0]:
                rank = (key.rank,) if key.rank is not None else ()
                message = (
                    f"allocated memory grew every epoch, {meds[0]:.2f} → {meds[-1]:.2f} GiB over {len(meds)} epochs"
                    + (f" on rank {key.rank}" if key.rank is not None else "")
                )
                remedy = (
                    "something keeps references across epochs (losses or tensors kept in lists, a growing cache): "
                    "log .item() values and detach what you keep; this ends in an out-of-memory error"
                )
                return Finding("memory_pressure", "warning", rank, (), message, remedy)
    return None


# ------------------------------------------------------------------- entry point
def findings(
    store: Store,
    now: float | None = None,
    status: RunStatus | None = None,
    records_only: list[Finding] | None = None,
) -> list[Finding]:
    """Everything worth telling, most important first. Cheap: recent windows only, never parses.

    records_only: `record_findings(store)` computed earlier for the store as it is now (the
    dashboard re-judges an idle run every few seconds, as time alone can make it stalled)."""
    status = status if status is not None else run_status(store, now)
    with store.lock:
        index = event_index(store)
        out: list[Finding | None] = [
            _crash_finding(store, status, index),
            _stall_finding(status),
            _overflow_storm(store, index, status.last_step),
            *(records_only if records_only is not None else _record_findings(store, index)),
        ]
    found = [f for f in out if f is not None]
    return sorted(found, key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), KINDS.index(f.kind)))


def record_findings(store: Store, memo: SpikeMemo | None = None) -> list[Finding]:
    """The findings that depend on the records alone, not on the time or the run's status.
    memo: kept by a caller that looks again and again (the dashboard)."""
    with store.lock:
        return _record_findings(store, event_index(store), memo)


def _overfit_finding(store: Store) -> Finding | None:
    fig = eval_figures(store)
    if fig is None or not fig.overfitting:
        return None
    remedy = (
        f"keep the checkpoint nearest step {fig.best_step:,}; stop early, add regularisation (weight decay, "
        "dropout) or more data"
    )
    return Finding("overfitting", "warning", (), (fig.best_step, fig.last_step), fig.message, remedy)


def _record_findings(store: Store, index: EventIndex, memo: SpikeMemo | None = None) -> list[Finding]:
    out = [
        _overfit_finding(store),
        _nan_finding(index),
        _loss_spikes(store, memo),
        *_straggler_findings(store),
        _memory_finding(store),
        _dataloader_finding(store),
        _comm_finding(store),
        _slowdown_finding(store),
    ]
    return [f for f in out if f is not None]
