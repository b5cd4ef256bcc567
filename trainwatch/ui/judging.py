"""Judging the run for the dashboard (verdict and findings), paced by what it costs.

A judgement that took long last time (hundreds of ranks) runs in a thread worker and arrives
as a `Judged` message, so keys and the header's numbers never wait behind it; one that was
cheap runs inline. An idle run is judged again every few seconds (a stall is the absence of
news). Textual-free but for the message it builds; the screen runs `judge` where told.
"""

from __future__ import annotations

import time

from trainwatch.diagnosis.findings import Finding
from trainwatch.diagnosis.judge import Judge, Judgement, not_judged
from trainwatch.store.store import Store
from trainwatch.ui.messages import Judged
from trainwatch.ui.redraw import paced

DIAGNOSE_IDLE_EVERY_S = 5.0
# ...or less often when a judgement costs more than this share of a core at that pace (256
# ranks: ~8 ms, every 8 s): an idle dashboard must stay idle.
IDLE_JUDGE_SHARE = 0.001
IDLE_JUDGE_MAX_S = 30.0  # (a stall is never told later than this for its cost)
# A judgement after the store changed takes at most about this share of a core: one rank's
# (a few ms) comes with every charts redraw, 256 ranks' (50-100 ms) every ~5 s (`PACE_MAX_S`) —
# the verdict of a stall or a crash is a matter of seconds, and at 2 % judging alone was
# 1.3-1.8 % of the dashboard's 15 % budget on 256 growing files.
JUDGE_SHARE = 0.01
# Work that took longer than this last time is done off the event loop's turn.
INLINE_S = 0.03
JUDGE_LOST_S = 30.0  # a judging thread that has not answered by then is taken as lost

# the verdict, its findings, the CPU seconds it took, whether the record findings were computed again
JudgedNow = tuple[Judgement, list[Finding], float, bool]


class Judging:
    """When to judge, and where (inline or in a thread), from the store version and the costs."""

    def __init__(self) -> None:
        self._judge = Judge()
        self.version = -1  # the store version last judged
        self.forced_at = -1e9  # wall time of the last judgement
        self.started = -1e9  # monotonic time of the last judgement
        self.running = False  # a judgement is running in its thread
        # what the last judgement cost after a change of the store (the findings that depend
        # on the records are computed again) and without one (only the time-dependent status)
        self.costs = {True: 0.0, False: 0.0}

    def plan(self, version: int, now_wall: float, force: bool = False) -> str | None:
        """None: nothing to judge now; "inline" or "thread": judge at `now_wall`, here or in a worker."""
        if (version == self.version and not force) or (self.running and time.monotonic() - self.started < JUDGE_LOST_S):
            return None
        changed = version != self.version
        self.version = version
        self.forced_at = now_wall
        self.started = time.monotonic()
        if self.costs[changed] > INLINE_S:
            self.running = True
            return "thread"
        return "inline"

    def due(self) -> bool:
        """With the charts: the store changed and the last judgement is paced out."""
        return time.monotonic() - self.started >= paced(self.costs[True], JUDGE_SHARE)

    def idle_due(self, now_wall: float) -> bool:
        """On the clock: the time-dependent status of an idle run."""
        by_cost = min(IDLE_JUDGE_MAX_S, self.costs[False] / IDLE_JUDGE_SHARE)
        every = max(DIAGNOSE_IDLE_EVERY_S, paced(self.costs[False]), by_cost)
        return now_wall - self.forced_at >= every

    def judge(self, store: Store, now_wall: float) -> JudgedNow:
        """Verdict, findings, the CPU seconds it took, whether the record findings were computed again."""
        start = time.thread_time()
        try:
            verdict = self._judge(store, now_wall)
        except Exception as exc:
            verdict = not_judged(f"diagnosis failed: {exc.__class__.__name__}")
        return verdict, list(verdict.findings), time.thread_time() - start, self._judge.recomputed

    def judged(self, message: Judged) -> None:
        self.running = False
        self.costs[message.recomputed] = message.cost

    def took(self, recomputed: bool, cost: float) -> None:
        self.costs[recomputed] = cost
