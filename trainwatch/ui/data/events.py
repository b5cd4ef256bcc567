"""The events added since the dashboard last looked (the Events tab and the overview's list)."""

from __future__ import annotations

from trainwatch.records import Event
from trainwatch.store.store import Store


def events_copy(store: Store, since: int = 0) -> tuple[list[Event], int]:
    """Events added after the first `since` ever added (by count), and the new count."""
    with store.lock:
        total = sum(store.event_counts.values())
        new = total - since
        if new <= 0:
            return [], total
        evs = list(store.events)[-new:]
    return evs, total
