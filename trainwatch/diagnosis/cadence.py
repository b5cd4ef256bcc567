"""How a rank's progress lines are usually spaced: its pace, its log interval, its pauses.

"Recently" is judged against this cadence, never a fixed timeout. The pace shown on every screen
is the median printed step time (`window.pace_s`), else the log's timestamps.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass

from trainwatch.diagnosis.segments import current_keys
from trainwatch.diagnosis.window import clock_pace_s, median, pace_s
from trainwatch.store.store import RankKey, Store, key_order

_STEP = operator.attrgetter("step")
_LOG_TIME = operator.attrgetter("log_time")

STALL_FACTOR = 10.0  # "much longer than its usual interval"
MIN_STALL_S = 120.0  # never call a run stalled after less than this
NO_CADENCE_STALL_S = 600.0  # before the cadence is known (first step, compile, no timing at all)
PAUSE_FACTOR = 2.0  # a pause as long as twice the longest recovered one (eval, checkpoint) is a stall


@dataclass(frozen=True)
class Cadence:
    """How a rank's progress lines are usually spaced."""

    sec_per_step: float  # from log timestamps, else the printed step time; nan if unknown
    step_time_s: float  # the printed per-step time (median, recent window); nan if not printed
    steps_per_record: float  # the log interval in steps
    usual_gap_s: float  # seconds between progress lines; nan if unknown
    longest_pause_s: float  # longest pause beyond the usual gap that the run recovered from
    progress_log_t: float  # log time (epoch s) of the last step, extrapolated; nan if no timestamps

    @property
    def pace_s(self) -> float:
        """The pace to show: the printed step time, else the log's timestamps (README "One pace")."""
        return self.step_time_s if not math.isnan(self.step_time_s) else self.sec_per_step


def cadence(store: Store, key: RankKey) -> Cadence:
    obs = list(store.observations.get(key, ()))
    # (Steps and times taken out in C-level passes: judging runs this for every rank, 256 ranks x
    # 256 observations each time the store changed.)
    steps = list(map(_STEP, obs))
    times = list(map(_LOG_TIME, obs))
    timed: list[tuple[int, float]] = (
        []  # a log without timestamps
        if all(map(math.isnan, times))
        else [(s, t) for s, t in zip(steps, times, strict=True) if s is not None and not math.isnan(t)]
    )
    rates: list[float] = []
    gaps: list[float] = []
    for (s0, t0), (s1, t1) in itertools.pairwise(timed):
        if s1 > s0 and t1 >= t0:
            rates.append((t1 - t0) / (s1 - s0))
            gaps.append(t1 - t0)
    if None in steps:
        deltas = [b - a for a, b in itertools.pairwise(steps) if a is not None and b is not None and b > a]
    else:
        deltas = [d for d in map(operator.sub, steps[1:], steps) if d > 0]
    steps_per_record = median(deltas) if deltas else 1.0
    printed = store.series.get(key.series_key("metric", "step_time_s"))
    step_time = pace_s(printed)
    clock = store.series.get(key.series_key("metric", "elapsed_s"))
    if clock is not None and len(clock) >= 2 and (printed is None or printed.steps[-1] < clock.steps[-1]):
        # a clock printed where the step time was (the generic reader tells them apart after a few prints)
        step_time = clock_pace_s(clock)
    sec_per_step = median(rates) if rates else step_time
    # Lines without timestamps between timed ones (Megatron's iteration lines between DeepSpeed's
    # timed `step=` lines) still arrive at the log interval: pace x interval is the usual gap.
    if not math.isnan(sec_per_step):
        usual_gap = sec_per_step * steps_per_record
    else:
        usual_gap = median(gaps) if gaps else math.nan
    longest_pause = 0.0
    if rates:
        # skip the first interval: warm-up / compilation is not a pause to tolerate later
        for (s0, t0), (s1, t1) in list(itertools.pairwise(timed))[1:]:
            if s1 > s0 and t1 >= t0:
                longest_pause = max(longest_pause, (t1 - t0) - (s1 - s0) * sec_per_step)
    progress_t = math.nan
    if timed:
        s_k, t_k = timed[-1]
        # (when the last step was reached: a record at that step after it is no progress, a final
        # evaluation after `Optimization Finished!`, an epoch's summary)
        at = len(timed) - 1
        while at > 0 and timed[at - 1][0] == s_k:
            at -= 1
        t_k = timed[at][1]
        last_step = obs[-1].step if obs and obs[-1].step is not None else s_k
        progress_t = t_k
        if last_step > s_k and not math.isnan(sec_per_step):
            progress_t = t_k + (last_step - s_k) * sec_per_step
    return Cadence(sec_per_step, step_time, steps_per_record, usual_gap, longest_pause, progress_t)


def stall_threshold(c: Cadence, stall_after: float | None = None) -> float:
    if stall_after is not None:
        return float(stall_after)
    if math.isnan(c.usual_gap_s):
        return NO_CADENCE_STALL_S
    return max(STALL_FACTOR * c.usual_gap_s, MIN_STALL_S, PAUSE_FACTOR * c.longest_pause_s)


def cadences(store: Store) -> dict[RankKey, Cadence]:
    """Every rank's cadence (steps in key order); computed once per store version."""
    return store.derived("cadences", lambda: {k: cadence(store, k) for k in sorted(current_keys(store), key=key_order)})
