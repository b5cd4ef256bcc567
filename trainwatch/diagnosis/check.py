"""`trainwatch check`: one line and an exit code a cron job or a CI step can act on.

The codes are distinct so a script can tell "something is wrong" from "nothing to judge": 0 running
or finished, 1 stalled / crashed / NaN, 3 unknown (no training step recognised); the CLI uses 2 for
usage errors (a missing file, an unknown option).
"""

from __future__ import annotations

import math

from trainwatch.diagnosis.eta import eta_s
from trainwatch.diagnosis.events import event_index
from trainwatch.diagnosis.status import run_status
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.store.store import Store

OK, PROBLEM, UNKNOWN = 0, 1, 3
BUDGET = "duration_budget"  # a total in tokens or samples (Composer's max_duration), not steps


def budget_text(store: Store) -> str:
    """`of a 300,000,000 token/sample budget (not a step count)`, or "" when the log prints none."""
    with store.lock:
        values = [m[BUDGET] for m in store.latest.values() if BUDGET in m]
    if not values:
        return ""
    return f"of a {max(values):,.0f} token/sample budget (not a step count)"


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
    budget = "" if status.total_steps else budget_text(store)
    parts = [f"step {status.last_step}" + (f" of {status.total_steps}" if status.total_steps else "")]
    if budget:
        parts[0] += f" {budget}"
    pace = status.pace_s
    if not math.isnan(pace):
        parts.append(f"{fmt_duration(pace)}/step")
    eta = eta_s(status)
    if not math.isnan(eta):
        parts.append(f"ETA {fmt_duration(eta)}")
    return OK, "running: " + ", ".join(parts)
