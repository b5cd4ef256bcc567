"""What a performance engineer would tell the user, most important first, each with its remedy.

Every finding states its evidence in numbers (ranks, steps, seconds, shares). Thresholds are
relative to the run itself (its own medians and spreads) so a healthy run stays silent: warm-up
steps are left out of baselines, single slow steps (eval, checkpoint) do not move a median, and
fp16's initial loss-scale search is not an overflow storm. One module per family of finding:
`ends` (crash, stall), `numerics` (NaN, loss spikes, overflows), `performance` (the rest).
"""

from __future__ import annotations

from trainwatch.diagnosis.events import EventIndex, event_index
from trainwatch.diagnosis.findings.ends import crash_finding, stall_finding
from trainwatch.diagnosis.findings.finding import KINDS, SEVERITY_ORDER, Finding
from trainwatch.diagnosis.findings.numerics import (
    SPIKE_MIN_BASE,
    SPIKE_MIN_REL,
    SPIKE_WINDOW,
    SPIKE_Z,
    SpikeMemo,
    loss_spikes,
    nan_finding,
    overflow_storm,
)
from trainwatch.diagnosis.findings.performance import (
    comm_finding,
    dataloader_finding,
    memory_finding,
    overfit_finding,
    slowdown_finding,
    straggler_findings,
)
from trainwatch.diagnosis.status import RunStatus, run_status
from trainwatch.store.store import Store

__all__ = [
    "KINDS",
    "SPIKE_MIN_BASE",
    "SPIKE_MIN_REL",
    "SPIKE_WINDOW",
    "SPIKE_Z",
    "Finding",
    "SpikeMemo",
    "findings",
    "loss_spikes",
    "record_findings",
]


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
            crash_finding(store, status, index),
            stall_finding(status),
            overflow_storm(store, index, status.last_step),
            *(records_only if records_only is not None else _record_findings(store, index)),
        ]
    found = [f for f in out if f is not None]
    return sorted(found, key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), KINDS.index(f.kind)))


def record_findings(store: Store, memo: SpikeMemo | None = None) -> list[Finding]:
    """The findings that depend on the records alone, not on the time or the run's status.
    memo: kept by a caller that looks again and again (the dashboard)."""
    with store.lock:
        return _record_findings(store, event_index(store), memo)


def _record_findings(store: Store, index: EventIndex, memo: SpikeMemo | None = None) -> list[Finding]:
    out = [
        overfit_finding(store),
        nan_finding(index),
        loss_spikes(store, memo),
        *straggler_findings(store),
        memory_finding(store),
        dataloader_finding(store),
        comm_finding(store),
        slowdown_finding(store),
    ]
    return [f for f in out if f is not None]
