"""Step N of M, the pace and the time left: computed once, written once, for every screen.

The header, `check`, `summary` and a running run's reason all print this line from
`progress_parts`, so none can show another step, pace or ETA. The pace is the rank with the
newest step's `Cadence.pace_s` (the median printed step time, else the log's timestamps); the
ETA is the steps left at that pace.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from trainwatch.diagnosis.cadence import cadence
from trainwatch.diagnosis.segments import current_keys
from trainwatch.diagnosis.units import fmt_duration
from trainwatch.store.store import Store, key_order

BUDGET = "duration_budget"  # a total in tokens or samples (Composer's max_duration), not steps


@dataclass(frozen=True)
class Progress:
    step: int | None  # the newest step of the current attempt
    total: int | None  # the run's length in steps, when the log says it
    pace_s: float  # seconds per step; nan when unknown
    budget: float | None = None  # a token/sample budget the log printed instead of a step total

    @property
    def fraction(self) -> float | None:
        if self.step is None or not self.total:
            return None
        return max(0.0, min(1.0, self.step / self.total))

    @property
    def eta_s(self) -> float:
        """Seconds to the last step at the pace; nan when the length or the pace is unknown."""
        if self.step is None or not self.total or math.isnan(self.pace_s) or self.pace_s <= 0:
            return math.nan
        return max(0, self.total - self.step) * self.pace_s


NO_PROGRESS = Progress(None, None, math.nan)


def progress(store: Store) -> Progress:
    """The run's progress as of the store's last change (cheap: one rank's cadence)."""
    with store.lock:
        total = store.total_steps
        budgets = [m[BUDGET] for m in store.latest.values() if BUDGET in m]
        budget = max(budgets) if budgets and not total else None
        keys = current_keys(store)
        if not keys:
            return Progress(None, total, math.nan, budget)
        key = min(keys, key=lambda k: (-store.latest_step[k], key_order(k)))
        return Progress(store.latest_step[key], total, cadence(store, key).pace_s, budget)


@dataclass(frozen=True)
class Part:
    """One piece of the progress line: `label` is its wording, `value` its number."""

    role: str  # step | total | budget | percent | pace | eta
    label: str
    value: str

    @property
    def text(self) -> str:
        return self.label + self.value


def progress_parts(p: Progress, *, eta: bool, percent: bool = False, num: Callable[[int], str] = str) -> list[Part]:
    """The line's pieces in order; `eta`: the run is running (a stopped run has no time left);
    `num`: how step numbers are written (the dashboard groups digits)."""
    if p.step is None:
        return []
    parts = [Part("step", "step ", num(p.step))]
    if p.total:
        parts.append(Part("total", " of ", num(p.total)))
        if percent:
            parts.append(Part("percent", "", f" ({p.step / p.total * 100:.1f}%)"))
    elif p.budget is not None:
        parts.append(Part("budget", " of a ", f"{p.budget:,.0f} token/sample budget (not a step count)"))
    if not math.isnan(p.pace_s):
        parts.append(Part("pace", "", f"{fmt_duration(p.pace_s)}/step"))
    if eta and not math.isnan(p.eta_s):
        parts.append(Part("eta", "ETA ", fmt_duration(p.eta_s)))
    return parts


def progress_text(parts: list[Part]) -> str:
    """`step 100 of 1000, 0.93s/step, ETA 14m`: the step and its total, then the rest by commas."""
    head = "".join(p.text for p in parts if p.role in ("step", "total", "budget", "percent"))
    tail = [p.text for p in parts if p.role in ("pace", "eta")]
    return ", ".join([head, *tail]) if head else ", ".join(tail)
