"""Time left: (M - N) steps at the pace the log actually shows.

The pace is measured between log timestamps when the log has them (it then includes eval
pauses and checkpoint saves, which the printed per-step time leaves out), else the printed
step time.
"""

from __future__ import annotations

import math

from trainwatch.diagnosis.status import RunStatus


def eta_s(status: RunStatus) -> float:
    """Seconds to total_steps for a running run; nan when not running or not known."""
    if status.state != "running" or status.total_steps is None or status.last_step is None:
        return math.nan
    pace = status.sec_per_step if not math.isnan(status.sec_per_step) else status.step_time_s
    if math.isnan(pace) or pace <= 0:
        return math.nan
    return max(0, status.total_steps - status.last_step) * pace
