"""A run is its attempts: torchrun's `attempt_<k>/` trees, relaunches into the same file.

The run's status is its current attempt's; an earlier attempt's failure is history with its own
root cause. The root cause of a failed attempt is the first rank whose own error is not a
reaction to another rank's death: when rank 1 raises, ranks 0 and 2 die of "Connection closed by
peer" in their next collective and the agent SIGTERMs the rest, and none of those is the error to
fix. The launcher's `failed (exitcode: 1) local_rank: 1` line is the evidence that settles it.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainwatch.diagnosis.cause import Cause, cause_sentence, pick_root_cause
from trainwatch.diagnosis.events import event_index
from trainwatch.diagnosis.segments import event_attempt
from trainwatch.records import Event
from trainwatch.store.store import Store


@dataclass(frozen=True)
class Attempt:
    """One launch of the run: how far it got and how it ended."""

    number: int
    state: str  # crashed | relaunched (earlier attempts); the run's state for the current one
    first_step: int | None
    last_step: int | None
    total_steps: int | None
    cause: Cause | None
    reason: str  # one sentence

    @property
    def steps_text(self) -> str:
        if self.last_step is None:
            return "no step"
        total = f"/{self.total_steps}" if self.total_steps else ""
        return f"step {self.last_step}{total}"


def attempts(store: Store, current_state: str, current_reason: str) -> list[Attempt]:
    """Every attempt in order; the current one carries the run's state and reason."""
    with store.lock:
        index = event_index(store)
        order = {name: i for i, name in enumerate(store.sources)}
        spans: dict[int, list[tuple[int, int]]] = {}
        for (n, _key), (lo, hi) in store.attempt_span.items():
            spans.setdefault(n, []).append((lo, hi))
        by_attempt: dict[int, list[Event]] = {}
        for e in index.failures:
            by_attempt.setdefault(event_attempt(store, e, index.restarts_last_line), []).append(e)
        total = store.total_steps
        current = store.current_attempt
        out: list[Attempt] = []
        for n in range(current + 1):
            ran = spans.get(n, [])
            first = min((lo for lo, _hi in ran), default=None)
            last = max((hi for _lo, hi in ran), default=None)
            if n == current:
                out.append(Attempt(n, current_state, first, last, total, None, current_reason))
                continue
            failures = by_attempt.get(n, [])
            cause = pick_root_cause(failures, order)
            if cause is not None:
                reason = f"failed: {cause_sentence(cause)}; relaunched"
                out.append(Attempt(n, "crashed", first, last, total, cause, reason))
            elif failures:
                reason = f"failed: {failures[0].message.strip()}; relaunched"
                out.append(Attempt(n, "crashed", first, last, total, None, reason))
            else:
                out.append(Attempt(n, "relaunched", first, last, total, None, "relaunched"))
        return out


def history_line(items: list[Attempt]) -> str:
    """`attempt 0 failed: rank 1 RuntimeError: ... ; relaunched; attempt 1 finished step 12/12`."""
    parts = []
    for a in items:
        if a.number == items[-1].number:
            parts.append(f"attempt {a.number} {a.state} {a.steps_text}")
        else:
            parts.append(f"attempt {a.number} {a.reason} at {a.steps_text}")
    return "; ".join(parts)


__all__ = ["Attempt", "Cause", "attempts", "history_line"]
