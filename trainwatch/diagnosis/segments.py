"""Which attempt of the run a record belongs to (README: the `attempt` extension).

Files under torchrun's `attempt_<k>/` and restarts inside one file number their own attempts. A
launcher log beside a `--log-dir` tree numbers nothing itself: there each launcher failure line
(`failed (exitcode: 1) local_rank: 1`) closes one attempt, in order.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Collection

from trainwatch.records import Event
from trainwatch.store.store import RankKey, Store

PATH_ATTEMPT = re.compile(r"attempt_(\d{1,9})(?!\d)[/\\]")


def launcher_failure(e: Event) -> bool:
    """The launcher's per-worker failure line: `failed (exitcode: 1) local_rank: 1 (pid: ...)`."""
    return e.kind == "crash" and "failed (exitcode:" in e.message and "local_rank" in e.data


def _launcher_failure_lines(store: Store, source: str) -> list[int]:
    return store.derived(
        f"launcher_failures:{source}",
        lambda: sorted({e.line for e in store.events if e.source == source and launcher_failure(e)}),
    )


def event_attempt(store: Store, e: Event, restart_sources: Collection[str]) -> int:
    """The attempt an event belongs to; `restart_sources`: sources with restarts inside them."""
    if e.attempt or store.current_attempt == 0 or e.source in restart_sources or PATH_ATTEMPT.search(e.source):
        return e.attempt
    lines = _launcher_failure_lines(store, e.source)
    if not lines:  # nothing in this source says which attempt: it is taken to be about the current one
        return store.current_attempt
    return min(bisect_left(lines, e.line), store.current_attempt)


def superseded(store: Store, key: RankKey) -> bool:
    """A rank stream of an earlier torchrun attempt (its file is under an older `attempt_<k>/`)."""
    if store.current_attempt == 0:
        return False
    return store.key_attempt.get(key, 0) < store.current_attempt and bool(PATH_ATTEMPT.search(key.source))


def current_keys(store: Store) -> list[RankKey]:
    """The rank streams of the current attempt (every stream when the run never restarted)."""
    return [k for k in store.latest_step if not superseded(store, k)]
