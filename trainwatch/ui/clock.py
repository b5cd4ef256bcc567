"""An injectable clock, so ages and ETAs on screen can be frozen for snapshot tests."""

from __future__ import annotations

import time
from dataclasses import dataclass


class Clock:
    """Wall and monotonic time as the dashboard sees them."""

    def wall(self) -> float:
        return time.time()

    def mono(self) -> float:
        return time.monotonic()


@dataclass
class FrozenClock(Clock):
    """A clock that never moves (tests, snapshots)."""

    wall_s: float = 0.0
    mono_s: float = 0.0

    def wall(self) -> float:
        return self.wall_s

    def mono(self) -> float:
        return self.mono_s
