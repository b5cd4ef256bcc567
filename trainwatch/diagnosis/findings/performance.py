"""Where the time goes wrong: stragglers, data loading, communication, a slowdown, memory, and
validation loss turning up (overfitting). Thresholds are relative to the run itself."""

from __future__ import annotations

import itertools
import math

from trainwatch.diagnosis.findings.finding import Finding, named_ranks, ranks_of, ranks_text
from trainwatch.diagnosis.overfit import eval_figures
from trainwatch.diagnosis.profile_phases import profile_data_share
from trainwatch.diagnosis.ranks import spreads, stragglers
from trainwatch.diagnosis.shares import comm_shares, data_shares
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.diagnosis.window import median, quantile, recent
from trainwatch.store.store import RankKey, Store

DATA_BOUND = 0.30
COMM_BOUND = 0.30
SLOWDOWN = 1.30
SLOWDOWN_MIN_POINTS = 40
MEM_PCT_HIGH = 95.0
MEM_GROWTH = 1.10
MEM_EPOCHS = 4


def straggler_findings(store: Store) -> list[Finding]:
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


def dataloader_finding(store: Store) -> Finding | None:
    shares = [s for s in data_shares(store) if s.share >= DATA_BOUND]
    if shares:
        worst = max(shares, key=lambda s: s.share)
        ranks, hosts, named = named_ranks([s.key for s in shares])
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


def comm_finding(store: Store) -> Finding | None:
    shares = [s for s in comm_shares(store) if s.share >= COMM_BOUND]
    if not shares:
        return None
    worst = max(shares, key=lambda s: s.share)
    ranks, hosts, named = named_ranks([s.key for s in shares])
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


def slowdown_finding(store: Store) -> Finding | None:
    hits: list[tuple[float, RankKey, float, float, float, float]] = []
    named = [ks for name in ("step_time_s", "samples_per_s", "tokens_per_s") for ks in store.series_named(name)]
    for key, series in named:
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
    ranks = ranks_of([h[1] for h in hits])
    who = f" on {ranks_text(list(ranks))}" if ranks else ""
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


def memory_finding(store: Store) -> Finding | None:
    caught = [e for e in store.events if e.kind == "oom" and e.severity == "warning"]
    if caught:
        # (fairseq's `WARNING: ran out of memory, skipping batch`: the run goes on without those batches)
        last = caught[-1]
        where = f" (the last after step {last.step})" if last.step is not None else ""
        times = "once" if len(caught) == 1 else f"{len(caught)} times"
        skipped = "the batch" if len(caught) == 1 else "each of those batches"
        message = f"the loop ran out of device memory {times} and skipped {skipped}{where}"
        remedy = (
            "each skipped batch is data the model never sees: reduce the micro-batch size or the longest sequence, "
            "enable activation checkpointing, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        )
        ranks = tuple(sorted({e.rank for e in caught if e.rank is not None}))
        return Finding("memory_pressure", "warning", ranks, (), message, remedy)
    for key, series in store.series_named("mem_pct"):
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
    for key, series in store.series_named("mem_gib"):
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


def overfit_finding(store: Store) -> Finding | None:
    fig = eval_figures(store)
    if fig is None or not fig.overfitting:
        return None
    remedy = (
        f"keep the checkpoint nearest step {fig.best_step:,}; stop early, add regularisation (weight decay, "
        "dropout) or more data"
    )
    return Finding("overfitting", "warning", (), (fig.best_step, fig.last_step), fig.message, remedy)
