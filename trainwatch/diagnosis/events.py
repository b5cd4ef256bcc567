"""Which events ended the run: failures and end markers that came after the last step.

A traceback in the middle of a run that kept stepping (a torch.compile fallback, a retried
download) is history, not a crash; only what came after the last progress, and after the last
restart, decides the run's fate. Events carry the step the runner saw last before them, which
orders them against steps without keeping line numbers for every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trainwatch.diagnosis.cause import pick_root_event
from trainwatch.diagnosis.segments import event_attempt, launcher_failure
from trainwatch.records import Event
from trainwatch.store.store import RankKey, Store, iso_to_epoch

FAILURE_KINDS = ("crash", "oom", "traceback", "signal", "nccl_timeout")
ROOT_CAUSE_KINDS = ("traceback", "oom", "nccl_timeout")
CLOCK_SLACK_S = 1.0


@dataclass(frozen=True)
class EventIndex:
    """One pass over the store's events, kept per store version (the dashboard asks often)."""

    failures: tuple[Event, ...]  # every failure-kind event, in arrival order
    finished: tuple[Event, ...]
    checkpoints_last: dict[str, Event]  # source -> newest checkpoint
    restarts_last_line: dict[str, int]  # source -> line of the newest restart
    first_nan: Event | None
    nan_count: int
    overflows: tuple[Event, ...]  # newest last; bounded by the store's event window
    # source -> attempt of the newest restart: a file truncated and written again numbers its
    # lines from 1, so an older attempt's events are history whatever their line numbers.
    restarts_last_attempt: dict[str, int] = field(default_factory=dict)


def event_index(store: Store) -> EventIndex:
    """The store's events indexed, kept until the store changes (`Store.derived`)."""
    return store.derived("event_index", lambda: _index(store))


def _index(store: Store) -> EventIndex:
    with store.lock:
        failures: list[Event] = []
        finished: list[Event] = []
        checkpoints: dict[str, Event] = {}
        restarts: dict[str, int] = {}
        attempts: dict[str, int] = {}
        first_nan: Event | None = None
        nan_count = 0
        overflows: list[Event] = []
        for e in store.events:
            kind = e.kind
            if kind in FAILURE_KINDS:
                if kind == "oom" and e.severity == "warning":
                    continue  # an OOM the loop caught and went on from (it skipped the batch): no end
                failures.append(e)
            elif kind == "overflow":
                overflows.append(e)
            elif kind == "nan":
                nan_count += 1
                if first_nan is None:
                    first_nan = e
            elif kind == "finished":
                finished.append(e)
            elif kind == "checkpoint":
                checkpoints[e.source] = e
            elif kind == "restart":
                if e.attempt > attempts.get(e.source, -1):
                    attempts[e.source] = e.attempt
                    restarts[e.source] = e.line
                elif e.attempt == attempts[e.source]:
                    restarts[e.source] = max(restarts[e.source], e.line)
        return EventIndex(
            tuple(failures), tuple(finished), checkpoints, restarts, first_nan, nan_count, tuple(overflows), attempts
        )


def source_last_step(store: Store, source: str) -> int | None:
    steps = [s for k, s in store.latest_step.items() if k.source == source]
    return max(steps) if steps else None


def after_last_progress(store: Store, e: Event, index: EventIndex, latest_progress_t: float = math.nan) -> bool:
    """True when nothing moved forward after this event: its own source by step, others by log time.

    Without `latest_progress_t` only the event's own source is considered (a rank that died while
    the others kept stepping until their collectives timed out)."""
    if e.attempt < index.restarts_last_attempt.get(e.source, 0):
        return False
    if event_attempt(store, e, index.restarts_last_line) < store.current_attempt:
        return False  # an earlier attempt's failure is history
    if e.line <= index.restarts_last_line.get(e.source, 0):
        return False
    last = store.latest_step.get(RankKey(e.source, e.rank, e.host))
    src_last = source_last_step(store, e.source)
    if src_last is not None:
        if e.step is None:
            return False  # before the first step of its source
        if e.step < max(src_last, last if last is not None else src_last):
            return False
    t = iso_to_epoch(e.time)
    return not (not math.isnan(t) and not math.isnan(latest_progress_t) and latest_progress_t > t + CLOCK_SLACK_S)


def root_cause_event(store: Store, index: EventIndex) -> Event | None:
    """The failure the log pins on a rank (see `cause.pick_root_event`), in the current attempt.

    Only failures after their own source's last step count: a recovered traceback mid-run is
    not the cause of anything."""
    picked = root_cause_pick(store, index)
    return picked[0] if picked is not None else None


def root_cause_pick(store: Store, index: EventIndex) -> tuple[Event, str] | None:
    """The root-cause event and the launcher's evidence for it ("" when it printed none)."""
    order = {name: i for i, name in enumerate(store.sources)}
    ended = [
        e
        for e in index.failures
        if (e.rank is not None or launcher_failure(e)) and after_last_progress(store, e, index)
    ]
    return pick_root_event(ended, order)
