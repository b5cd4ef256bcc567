"""When the dashboard redraws what: a plain class, given the store's version and the clock.

Two paces: the numbers (header, ranks, events, log) at most every `fast_interval` while the
log grows, the charts (charts, phase views, the verdict) at most every `slow_interval`. A
redraw that took long is spaced out so that it takes at most about `share` of a core, and
nothing shown lags the log by more than PACE_MAX_S. No Textual here: the screen turns the
plan into redraws and timers, tests drive it with numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

NUMBERS, CHARTS = "numbers", "charts"
# A redraw that takes long (hundreds of ranks) is spaced out so that redrawing takes at most
# about this share of a core, whatever the intervals say: numbers and charts get later, the
# dashboard stays responsive and off the training job's CPU. (2 %: a redraw costing under 20 ms,
# one rank's charts, keeps its 1 s interval; 256 ranks' charts and judgement, ~50 ms each, come
# every 2-3 s. At 5 % the dashboard on 256 growing files took 20-28 % of a core, over its 15 %.)
# (Costs are the redrawing thread's CPU time, waiting for the GIL is not cost; a chart's cost
# includes the compositor's rendering of it, `Chart.take_paint_cost`.)
REDRAW_SHARE = 0.02
NUMBERS_SHARE = 0.10  # the header's numbers are what a user watches: they may take more
PACE_MAX_S = 5.0  # ...but nothing shown lags the log by more than this
TIMER_SLACK_S = 0.01  # a timer that fires this close to its time redraws


def paced(cost: float, share: float = REDRAW_SHARE) -> float:
    """The least time between two redraws of a kind that took `cost` seconds."""
    return min(PACE_MAX_S, cost / share)


def smoothed(previous: float, cost: float) -> float:
    """A redraw's usual cost: one slow redraw (a burst of events) does not hold the next one back long."""
    return 0.7 * previous + 0.3 * cost


@dataclass
class Pace:
    """One kind of redraw: its least interval and share of a core, when it last ran, what it cost."""

    interval: float
    share: float
    at: float = -1e9  # monotonic time of the last redraw
    cost: float = 0.0  # CPU seconds the last redraw took
    waiting: bool = False  # a timer for it is set

    def wait(self, now: float) -> float:
        return self.at + max(self.interval, paced(self.cost, self.share)) - now


class RedrawScheduler:
    """Which redraws to run now and which later, after a store change or a timer."""

    def __init__(self, fast_interval: float, slow_interval: float) -> None:
        self.paces = {NUMBERS: Pace(fast_interval, NUMBERS_SHARE), CHARTS: Pace(slow_interval, REDRAW_SHARE)}
        self.numbers_version = -1  # the store version the numbers last showed
        self.charts_version = -1  # ...and the charts

    def changed(self, now: float) -> dict[str, float]:
        """The store changed: per kind, 0 to redraw now, or the delay of a timer to set (a kind
        with a timer already set is left out)."""
        plan: dict[str, float] = {}
        for kind, pace in self.paces.items():
            wait = pace.wait(now)
            if wait <= 0:
                plan[kind] = 0.0
            elif not pace.waiting:
                pace.waiting = True
                plan[kind] = wait
        return plan

    def fired(self, kind: str, now: float) -> float:
        """A timer for `kind` fired: 0 to redraw now, else the delay of the next timer (a redraw
        drawn in pieces added its cost after the timer was set)."""
        pace = self.paces[kind]
        wait = pace.wait(now)
        if kind == CHARTS and wait > TIMER_SLACK_S:
            return wait
        pace.waiting = False
        return 0.0

    def ran(self, kind: str, now: float, cost: float) -> None:
        pace = self.paces[kind]
        pace.at = now
        pace.cost = smoothed(pace.cost, cost) if kind == NUMBERS else cost

    def add_cost(self, kind: str, cost: float) -> None:
        """Part of a redraw done later (a chart drawn on its own turn) counts for its pacing."""
        self.paces[kind].cost += cost

    def unannounced(self, version: int) -> bool:
        """On the clock: the store changed without a message (a store filled directly) and no
        chart redraw is on its way."""
        return version != self.charts_version and not self.paces[CHARTS].waiting

    def numbers_changed(self, version: int) -> bool:
        """Whether the numbers have news since they last showed; they now show `version`."""
        changed = version != self.numbers_version
        self.numbers_version = version
        return changed
