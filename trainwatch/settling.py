"""When a change of status is worth telling: the settle and flap rule, as a plain class.

Shared by `trainwatch watch` (views/watch.py) and the dashboard's `--notify` (ui/notify.py), which
may not import each other: a traceback printed in the middle of training reads "crashed" until the
next step, and a run that goes back and forth must be told once, not at every swing.

- the first status seen is the baseline, told at once;
- a new status is told once it has held for the settle time;
- after two changes told within the flap window (there and back), a further change must hold for
  the whole flap window before it is told.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SETTLE_S = 30.0  # a new status must hold this long before it is told...
FLAP_FACTOR = 20.0  # ...and this many times as long when the run goes back and forth


@dataclass(frozen=True)
class Told:
    """A status to tell now."""

    status: str
    change: bool  # False for the baseline (the first status seen)
    unreported: int  # changes that did not hold since the last status told


@dataclass
class StatusSettler:
    """Turns a sequence of statuses into the ones to tell. Times are seconds, passed in."""

    settle_s: float
    flap_s: float
    told_status: str | None = None
    told_changes: list[float] = field(default_factory=list)  # when each change (not the baseline) was told
    _candidate: tuple[str, float] | None = None  # a status other than the told one, and since when
    _unreported: int = 0

    def look(self, status: str, now: float, final: bool = False) -> Told | None:
        """The status to tell after this look, if any. final: nothing will change any more, what is
        pending is told now."""
        if self.told_status is None:
            return self._tell(status, now, change=False)
        if status == self.told_status:
            if self._candidate is not None:
                self._unreported += 1
            self._candidate = None
            return None
        if self._candidate is None or self._candidate[0] != status:
            if self._candidate is not None:
                self._unreported += 1
            self._candidate = (status, now)
        if final or now - self._candidate[1] >= self.hold_s(self._candidate[1]):
            return self._tell(status, now, change=True)
        return None

    def hold_s(self, since: float) -> float:
        """How long a status that began at `since` must hold: the settle time, or the flap window
        when the two changes before it were told within that window (the run goes back and forth)."""
        recent = [t for t in self.told_changes if since - self.flap_s < t <= since]
        return self.flap_s if len(recent) >= 2 else self.settle_s

    def _tell(self, status: str, now: float, change: bool) -> Told:
        told = Told(status, change, self._unreported)
        self.told_status = status
        self._candidate = None
        self._unreported = 0
        if change:
            self.told_changes.append(now)
            horizon = now - 2 * self.flap_s
            self.told_changes = [t for t in self.told_changes if t > horizon]
        return told
