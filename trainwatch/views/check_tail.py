"""`check` on a big log answers from its end when the end says enough.

The present of a run is in its last megabytes: a traceback or a finish marker there, or with the
step total in view a step written recently (running) or long ago (stalled: the total is not
reached, so it is no finish), decides `check`'s answer without reading the history (seconds on a
GB log). Anything else — unknown, or running/stalled towards a total the window does not hold
(`max_iters` printed once at the start: reached, the run is finished) — may need the history, so
the caller then reads the whole file as before.
"""

from __future__ import annotations

from trainwatch.diagnosis.check import check_line
from trainwatch.diagnosis.status import run_status
from trainwatch.store.store import Store

# The states the tail window alone decides: a crash or a finish at the end; a fresh step, or none
# for long, towards a total the window shows.
DECIDED_BY_THE_END = ("crashed", "finished", "running", "stalled")
NEED_THE_TOTAL = ("running", "stalled")


def answer_from_window(store: Store, stall_after: float | None = None) -> tuple[int, str] | None:
    """`check_line`'s (code, line) from a store holding the files' tail windows (`Pipeline.read_windows`),
    or None when the window cannot decide."""
    status = run_status(store, stall_after=stall_after)
    if status.state not in DECIDED_BY_THE_END:
        return None
    if status.state in NEED_THE_TOTAL and store.total_steps is None:
        return None  # the total may be printed only at the start: reached, the run is finished
    return check_line(store, stall_after=stall_after)
