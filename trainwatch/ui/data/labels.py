"""What the dashboard calls things: chart titles, which charts to show, rank and source labels."""

from __future__ import annotations

import os
from collections.abc import Iterable

from trainwatch.store.store import RankKey

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
# Memory metrics, what a user watches first: the peak allocated (what decides an OOM), then the
# peak reserved, then the instant values (Megatron prints `allocated` once after step 5, a
# misleading 0.29 GiB beside a 14.2 GiB peak). The others stay selectable with `m`.
MEMORY = ("max_mem_gib", "max_reserved_mem_gib", "mem_gib", "reserved_mem_gib")
# Charts shown by default, in this order, when the log has them.
DEFAULT_CHARTS = (
    "loss",
    "step_time_s",
    "lr",
    *THROUGHPUT,
    "grad_norm",
    "loss_scale",
    "eval_loss",
    *MEMORY,
    "data_time_s",
)
# Of each family the dashboard charts only the best one the log has (one chart for samples/s,
# one for memory).
CHART_FAMILIES = (
    ("samples_per_s", "running_avg_samples_per_s", "samples_per_s_per_gpu"),
    ("tokens_per_s", "tokens_per_s_per_gpu"),
    MEMORY,
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
    "reserved_mem_gib": "reserved memory (GiB)",
    "max_reserved_mem_gib": "peak reserved memory (GiB)",
    "data_time_s": "data time (s)",
}


def title_for(name: str) -> str:
    return TITLES.get(name, name)


def default_charts(present: Iterable[str]) -> list[str]:
    """DEFAULT_CHARTS the log has, keeping only the best metric of each throughput family; a log
    with none of them (CatBoost's `learn` / `test`, a loop's own names) charts its own metrics, by
    name, rather than an empty Overview."""
    have = set(present)
    skip = {m for family in CHART_FAMILIES for m in [n for n in family if n in have][1:]}
    usual = [m for m in DEFAULT_CHARTS if m in have and m not in skip]
    return usual or sorted(m for m in have if m != "epoch")  # (the compare view passes a set)


def rank_label(key: RankKey, many_sources: bool, many_hosts: bool = False) -> str:
    """`rank 3`; a log that names no rank (one process, a launcher that prints none) is named by
    its file (`train.log`), in the legends and the Ranks tab alike."""
    if key.rank is None:  # (its path's tail where two sources could share a file name)
        name = (
            short_source(key.source) if many_sources else short_source(os.path.basename(key.source) or key.source, 24)
        )
        return f"{key.host}/{name}" if many_hosts and key.host else name
    rank = f"rank {key.rank}"
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


def many_hosts(keys: Iterable[RankKey]) -> bool:
    """Name the node in labels only when there are several (local rank numbers repeat per node)."""
    return len({k.host for k in keys if k.host}) > 1


def compact_label(label: str) -> str:
    """`rank 3` -> `r3` (also inside `host/rank 3` or `eval loss rank 3`)."""
    return label.replace("rank ", "r")


def fit_labels(labels: list[str], fixed: int, width: int) -> list[str]:
    """Labels short enough that they and `fixed` cells of values and keys fit in `width`: first
    `compact_label`, then cut in the middle (keeping more of the end, where the rank number is),
    each to the same length but not below 4 cells. A legend shortens its labels so it does not
    have to cut a value (a straggler's step time is what the user came for)."""
    if fixed + sum(len(s) for s in labels) <= width:
        return labels
    short = [compact_label(s) for s in labels]
    longest = max((len(s) for s in short), default=0)
    cap = longest
    while cap > 4 and fixed + sum(min(len(s), cap) for s in short) > width:
        cap -= 1
    return [s if len(s) <= cap else _cut(s, cap) for s in short]


def _cut(text: str, cap: int) -> str:
    head = (cap - 1) // 3
    return text[:head] + "…" + text[len(text) - (cap - 1 - head) :]
