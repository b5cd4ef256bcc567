"""`trainwatch check`: one line and an exit code a cron job or a CI step can act on.

The codes are distinct so a script can tell "something is wrong" from "nothing to judge": 0 running
or finished, 1 stalled / crashed / NaN, 3 unknown (no training step recognised); the CLI uses 2 for
usage errors (a missing file, an unknown option).
"""

from __future__ import annotations

from trainwatch.diagnosis.events import event_index
from trainwatch.diagnosis.progress import progress_text
from trainwatch.diagnosis.status import run_status
from trainwatch.store.store import Store

OK, PROBLEM, UNKNOWN = 0, 1, 3


def check_line(store: Store, stall_after: float | None = None, now: float | None = None) -> tuple[int, str]:
    """(0, "running: ...") / (0, "finished: ...") / (1, "crashed|stalled|nan: ...") / (3, "unknown: ...")."""
    status = run_status(store, now, stall_after=stall_after)
    if status.state in ("crashed", "stalled"):
        return PROBLEM, f"{status.state}: {status.reason}"
    with store.lock:
        nan = event_index(store).first_nan
    if nan is not None:
        where = f" (rank {nan.rank})" if nan.rank is not None else ""
        message = nan.message.strip() or f"NaN at step {nan.step}"
        return PROBLEM, f"nan: {message}{where}"
    if status.state == "unknown":
        return UNKNOWN, f"unknown: {status.reason}"
    if status.state == "finished":
        return OK, f"finished: {status.reason}"
    return OK, "running: " + progress_text(status.progress_parts())
